// pfio's TensorFlow filesystem plugin: TensorFlow's modular filesystem C API
// (tensorflow/c/experimental/filesystem/filesystem_interface.h) over pfio.
//
// Every operation calls a function of the Python module
// pfio.integrations.tensorflow.plugin.bridge, in the Python process that loaded the
// plugin (tf.experimental.register_filesystem_plugin): this file only moves arguments,
// results and errors across. TensorFlow calls filesystem operations from its own threads,
// so each call takes the GIL (PyGILState_Ensure/Release). A Python exception becomes a
// TensorFlow status through bridge.status_of(exception) -> (code, message).
//
// The library is not linked with libpython: the Python symbols come from the process.
// Built by pfio/integrations/tensorflow/plugin/build.py.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensorflow/c/experimental/filesystem/filesystem_interface.h"
#include "tensorflow/c/tf_file_statistics.h"
#include "tensorflow/c/tf_status.h"

namespace {

const char kBridgeModule[] = "pfio.integrations.tensorflow.plugin.bridge";

// The bridge module (a strong reference), imported on first use with the GIL held.
PyObject* g_bridge = nullptr;

void* Allocate(size_t size) { return std::malloc(size ? size : 1); }
void Free(void* ptr) { std::free(ptr); }

char* CopyString(const char* text) {
  size_t n = std::strlen(text) + 1;
  char* copy = static_cast<char*>(Allocate(n));
  std::memcpy(copy, text, n);
  return copy;
}

bool PythonIsRunning() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// Holds the GIL for its lifetime (from any thread, TensorFlow's included).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// Sets `status` from the Python exception being raised, and clears it.
void SetStatusFromPython(TF_Status* status) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  bool described = false;
  if (g_bridge != nullptr && value != nullptr) {
    PyObject* result = PyObject_CallMethod(g_bridge, "status_of", "O", value);
    int code = 0;
    const char* message = nullptr;
    if (result != nullptr && PyArg_ParseTuple(result, "is", &code, &message)) {
      TF_SetStatus(status, static_cast<TF_Code>(code), message);
      described = true;
    }
    Py_XDECREF(result);
    PyErr_Clear();
  }
  if (!described) {
    // the bridge could not be imported (or could not describe the error): its text
    std::string message = "pfio TensorFlow plugin: ";
    PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
    const char* utf8 = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
    message += utf8 != nullptr ? utf8 : "an error that could not be described";
    Py_XDECREF(text);
    PyErr_Clear();
    TF_SetStatus(status, TF_INTERNAL, message.c_str());
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
}

bool ImportBridge(TF_Status* status) {
  if (g_bridge != nullptr) return true;
  PyObject* module = PyImport_ImportModule(kBridgeModule);
  if (module == nullptr) {
    SetStatusFromPython(status);
    return false;
  }
  g_bridge = module;
  return true;
}

// bridge.<function>(*Py_BuildValue(format, ...)) with the GIL held: a new reference, or
// nullptr with `status` set. `format` builds a tuple ("(s)", "(ss)", ...).
PyObject* Call(TF_Status* status, const char* function, const char* format, ...) {
  if (!ImportBridge(status)) return nullptr;
  va_list arguments;
  va_start(arguments, format);
  PyObject* args = Py_VaBuildValue(format, arguments);
  va_end(arguments);
  PyObject* callable = args != nullptr ? PyObject_GetAttrString(g_bridge, function) : nullptr;
  PyObject* result = callable != nullptr ? PyObject_CallObject(callable, args) : nullptr;
  Py_XDECREF(callable);
  Py_XDECREF(args);
  if (result == nullptr) {
    SetStatusFromPython(status);
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  return result;
}

bool CheckRunning(TF_Status* status) {
  if (PythonIsRunning()) return true;
  TF_SetStatus(status, TF_UNAVAILABLE,
               "pfio TensorFlow plugin: the Python interpreter is shutting down");
  return false;
}

// An operation on one path whose result is only its status.
void PathOperation(const char* function, const char* path, TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  Py_XDECREF(Call(status, function, "(s)", path));
}

// A list of str from the bridge as a char** TensorFlow owns; -1 on error.
int StringList(PyObject* list, char*** entries, TF_Status* status) {
  if (list == nullptr) return -1;
  Py_ssize_t n = PyList_Check(list) ? PyList_Size(list) : -1;
  if (n < 0) {
    Py_DECREF(list);
    TF_SetStatus(status, TF_INTERNAL, "pfio TensorFlow plugin: the bridge gave no list");
    return -1;
  }
  std::vector<const char*> names;
  for (Py_ssize_t i = 0; i < n; i++) {
    const char* name = PyUnicode_AsUTF8(PyList_GetItem(list, i));
    if (name == nullptr) {
      SetStatusFromPython(status);
      Py_DECREF(list);
      return -1;
    }
    names.push_back(name);
  }
  *entries = static_cast<char**>(Allocate(sizeof(char*) * names.size()));
  for (size_t i = 0; i < names.size(); i++) (*entries)[i] = CopyString(names[i]);
  Py_DECREF(list);
  return static_cast<int>(names.size());
}

// A Python object kept by a file handle: released with the GIL, or leaked at exit.
void ReleaseHandle(void* handle, const char* function) {
  if (handle == nullptr || !PythonIsRunning()) return;
  Gil gil;
  PyObject* object = static_cast<PyObject*>(handle);
  if (g_bridge != nullptr) {
    PyObject* result = PyObject_CallMethod(g_bridge, function, "O", object);
    if (result == nullptr) PyErr_Clear();  // the bridge logs what went wrong
    Py_XDECREF(result);
  }
  Py_DECREF(object);
}

// -- random access files -------------------------------------------------------------

namespace random_access {

void Cleanup(TF_RandomAccessFile* file) {
  ReleaseHandle(file->plugin_file, "close_reader");
  file->plugin_file = nullptr;
}

int64_t Read(const TF_RandomAccessFile* file, uint64_t offset, size_t n, char* buffer,
             TF_Status* status) {
  if (!CheckRunning(status)) return -1;
  Gil gil;
  PyObject* view = PyMemoryView_FromMemory(buffer, static_cast<Py_ssize_t>(n), PyBUF_WRITE);
  if (view == nullptr) {
    SetStatusFromPython(status);
    return -1;
  }
  PyObject* result = Call(status, "read_into", "(OKO)", static_cast<PyObject*>(file->plugin_file),
                          static_cast<unsigned long long>(offset), view);
  // the memory is TensorFlow's: no Python object may keep a view of it
  PyObject* released = PyObject_CallMethod(view, "release", nullptr);
  if (released == nullptr) PyErr_Clear();
  Py_XDECREF(released);
  Py_DECREF(view);
  if (result == nullptr) return -1;
  long long got = PyLong_AsLongLong(result);
  Py_DECREF(result);
  if (got < 0) {
    PyErr_Clear();
    TF_SetStatus(status, TF_INTERNAL, "pfio TensorFlow plugin: a read gave no byte count");
    return -1;
  }
  if (static_cast<size_t>(got) < n) {
    TF_SetStatus(status, TF_OUT_OF_RANGE, "Read less bytes than requested");
  }
  return got;
}

}  // namespace random_access

// -- writable files ------------------------------------------------------------------

namespace writable {

void Cleanup(TF_WritableFile* file) {
  // a file TensorFlow never closed: what was written is discarded, never published
  ReleaseHandle(file->plugin_file, "discard_writer");
  file->plugin_file = nullptr;
}

void Append(const TF_WritableFile* file, const char* buffer, size_t n, TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  PyObject* data = PyBytes_FromStringAndSize(buffer, static_cast<Py_ssize_t>(n));
  if (data == nullptr) {
    SetStatusFromPython(status);
    return;
  }
  Py_XDECREF(Call(status, "write", "(ON)", static_cast<PyObject*>(file->plugin_file), data));
}

int64_t Tell(const TF_WritableFile* file, TF_Status* status) {
  if (!CheckRunning(status)) return -1;
  Gil gil;
  PyObject* result = Call(status, "tell", "(O)", static_cast<PyObject*>(file->plugin_file));
  if (result == nullptr) return -1;
  long long position = PyLong_AsLongLong(result);
  Py_DECREF(result);
  return position;
}

// Nothing is visible before close (pfio publishes a file whole, on close): flush and sync
// have nothing to do.
void Flush(const TF_WritableFile* file, TF_Status* status) { TF_SetStatus(status, TF_OK, ""); }

void Close(const TF_WritableFile* file, TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  Py_XDECREF(Call(status, "close_writer", "(O)", static_cast<PyObject*>(file->plugin_file)));
}

}  // namespace writable

// -- the filesystem ------------------------------------------------------------------

namespace filesystem {

void Init(TF_Filesystem* filesystem, TF_Status* status) {
  filesystem->plugin_filesystem = nullptr;
  TF_SetStatus(status, TF_OK, "");
}

void Cleanup(TF_Filesystem* filesystem) {}

void NewRandomAccessFile(const TF_Filesystem* filesystem, const char* path,
                         TF_RandomAccessFile* file, TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  file->plugin_file = Call(status, "open_reader", "(s)", path);
}

void OpenWriter(const char* path, int append, TF_WritableFile* file, TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  file->plugin_file = Call(status, "open_writer", "(si)", path, append);
}

void NewWritableFile(const TF_Filesystem* filesystem, const char* path, TF_WritableFile* file,
                     TF_Status* status) {
  OpenWriter(path, 0, file, status);
}

void NewAppendableFile(const TF_Filesystem* filesystem, const char* path,
                       TF_WritableFile* file, TF_Status* status) {
  OpenWriter(path, 1, file, status);
}

void CreateDir(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  PathOperation("create_dir", path, status);
}

void RecursivelyCreateDir(const TF_Filesystem* filesystem, const char* path,
                          TF_Status* status) {
  PathOperation("create_dirs", path, status);
}

void DeleteFile(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  PathOperation("delete_file", path, status);
}

void DeleteDir(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  PathOperation("delete_dir", path, status);
}

void DeleteRecursively(const TF_Filesystem* filesystem, const char* path,
                       uint64_t* undeleted_files, uint64_t* undeleted_dirs,
                       TF_Status* status) {
  PathOperation("delete_recursively", path, status);
  // pfio removes a tree as one operation: on failure, say the top was not removed
  *undeleted_files = 0;
  *undeleted_dirs = TF_GetCode(status) == TF_OK ? 0 : 1;
}

void RenameFile(const TF_Filesystem* filesystem, const char* src, const char* dst,
                TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  Py_XDECREF(Call(status, "rename", "(ss)", src, dst));
}

void CopyFile(const TF_Filesystem* filesystem, const char* src, const char* dst,
              TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  Py_XDECREF(Call(status, "copy", "(ss)", src, dst));
}

void PathExists(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  PathOperation("path_exists", path, status);
}

void Stat(const TF_Filesystem* filesystem, const char* path, TF_FileStatistics* stats,
          TF_Status* status) {
  if (!CheckRunning(status)) return;
  Gil gil;
  PyObject* result = Call(status, "stat", "(s)", path);
  if (result == nullptr) return;
  long long length = 0, mtime_nsec = 0;
  int is_directory = 0;
  if (PyArg_ParseTuple(result, "LLp", &length, &mtime_nsec, &is_directory)) {
    stats->length = length;
    stats->mtime_nsec = mtime_nsec;
    stats->is_directory = is_directory != 0;
  } else {
    SetStatusFromPython(status);
  }
  Py_DECREF(result);
}

bool IsDirectory(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  PathOperation("is_directory", path, status);
  return TF_GetCode(status) == TF_OK;
}

int64_t GetFileSize(const TF_Filesystem* filesystem, const char* path, TF_Status* status) {
  if (!CheckRunning(status)) return -1;
  Gil gil;
  PyObject* result = Call(status, "file_size", "(s)", path);
  if (result == nullptr) return -1;
  long long size = PyLong_AsLongLong(result);
  Py_DECREF(result);
  return size;
}

// Paths reach the other operations as the user wrote them: the bridge parses them.
char* TranslateName(const TF_Filesystem* filesystem, const char* uri) {
  return CopyString(uri);
}

int GetChildren(const TF_Filesystem* filesystem, const char* path, char*** entries,
                TF_Status* status) {
  if (!CheckRunning(status)) return -1;
  Gil gil;
  return StringList(Call(status, "children", "(s)", path), entries, status);
}

int GetMatchingPaths(const TF_Filesystem* filesystem, const char* glob, char*** entries,
                     TF_Status* status) {
  if (!CheckRunning(status)) return -1;
  Gil gil;
  return StringList(Call(status, "matching_paths", "(s)", glob), entries, status);
}

}  // namespace filesystem

template <typename T>
T* NewTable() {
  T* table = static_cast<T*>(Allocate(sizeof(T)));
  std::memset(table, 0, sizeof(T));
  return table;
}

void ProvideFilesystemSupportFor(TF_FilesystemPluginOps* ops, const char* scheme) {
  TF_SetFilesystemVersionMetadata(ops);
  ops->scheme = CopyString(scheme);

  ops->random_access_file_ops = NewTable<TF_RandomAccessFileOps>();
  ops->random_access_file_ops->cleanup = random_access::Cleanup;
  ops->random_access_file_ops->read = random_access::Read;

  ops->writable_file_ops = NewTable<TF_WritableFileOps>();
  ops->writable_file_ops->cleanup = writable::Cleanup;
  ops->writable_file_ops->append = writable::Append;
  ops->writable_file_ops->tell = writable::Tell;
  ops->writable_file_ops->flush = writable::Flush;
  ops->writable_file_ops->sync = writable::Flush;
  ops->writable_file_ops->close = writable::Close;

  // read-only memory regions (memory-mapped files) are not supported
  ops->read_only_memory_region_ops = nullptr;

  TF_FilesystemOps* fs = NewTable<TF_FilesystemOps>();
  ops->filesystem_ops = fs;
  fs->init = filesystem::Init;
  fs->cleanup = filesystem::Cleanup;
  fs->new_random_access_file = filesystem::NewRandomAccessFile;
  fs->new_writable_file = filesystem::NewWritableFile;
  fs->new_appendable_file = filesystem::NewAppendableFile;
  fs->create_dir = filesystem::CreateDir;
  fs->recursively_create_dir = filesystem::RecursivelyCreateDir;
  fs->delete_file = filesystem::DeleteFile;
  fs->delete_dir = filesystem::DeleteDir;
  fs->delete_recursively = filesystem::DeleteRecursively;
  fs->rename_file = filesystem::RenameFile;
  fs->copy_file = filesystem::CopyFile;
  fs->path_exists = filesystem::PathExists;
  fs->stat = filesystem::Stat;
  fs->is_directory = filesystem::IsDirectory;
  fs->get_file_size = filesystem::GetFileSize;
  fs->translate_name = filesystem::TranslateName;
  fs->get_children = filesystem::GetChildren;
  fs->get_matching_paths = filesystem::GetMatchingPaths;
}

// The schemes pfio.integrations.tensorflow.plugin.register() asked for and TensorFlow does
// not have from this plugin yet (bridge.take_schemes()).
std::vector<std::string> SchemesToRegister() {
  std::vector<std::string> schemes;
  if (!PythonIsRunning()) return schemes;
  Gil gil;
  TF_Status* status = TF_NewStatus();
  PyObject* list = Call(status, "take_schemes", "()");
  TF_DeleteStatus(status);
  if (list == nullptr) return schemes;  // the bridge logged why
  for (Py_ssize_t i = 0; PyList_Check(list) && i < PyList_Size(list); i++) {
    const char* scheme = PyUnicode_AsUTF8(PyList_GetItem(list, i));
    if (scheme == nullptr) {
      PyErr_Clear();
      continue;
    }
    schemes.push_back(scheme);
  }
  Py_DECREF(list);
  return schemes;
}

}  // namespace

extern "C" {

TF_CAPI_EXPORT void TF_InitPlugin(TF_FilesystemPluginInfo* info) {
  info->plugin_memory_allocate = Allocate;
  info->plugin_memory_free = Free;
  std::vector<std::string> schemes = SchemesToRegister();
  info->num_schemes = schemes.size();
  info->ops = static_cast<TF_FilesystemPluginOps*>(
      Allocate(sizeof(TF_FilesystemPluginOps) * schemes.size()));
  std::memset(info->ops, 0, sizeof(TF_FilesystemPluginOps) * schemes.size());
  for (size_t i = 0; i < schemes.size(); i++) {
    ProvideFilesystemSupportFor(&info->ops[i], schemes[i].c_str());
  }
}

}  // extern "C"
