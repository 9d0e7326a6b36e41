/* pfio.trace._native: the tracer's hot path for local files opened "rb", in C; this header
 * declares what the files of this directory share.
 *
 * Why it exists: tracing a loop of open + read + close of small local files costs, in pure
 * Python, a Python-level `read` override, the `open` wrapper's frame and its logic, a span
 * kept at close, the histogram fold and four clock reads as Python calls: 1.11-1.20x
 * (metrics) and 1.20-1.25x (spans) of the same loop untraced. This module does the same
 * work in C:
 *
 * - `CountedReader` (reader.c): an `io.BufferedReader` subtype whose `read`, `read1`,
 *   `readline`, `readinto` and `readinto1` call the base's, time them on the clock of
 *   `time.perf_counter_ns`, and count them exactly as pfio.trace.files' `CountedReader`
 *   does (`stats.raw.append(ns)`, `stats.nbytes += n`, `compact()` at `RAW_LIMIT`
 *   durations), plus the file's own totals for its span. At the spans level (`_opened`
 *   set) `close` / `__exit__` close the file, then keep its span once, as pfio.trace.files'
 *   `SpannedReader` does. One type serves both levels, built directly (no Python subclass).
 * - `ReaderOpen` (open.c): the `open` wrapper's fast path (`fs.open(path, "rb")` in a thread
 *   already traced, not nested): it times building the reader, counts the open and tells
 *   the reader where to count. Any other call goes to the Python wrapper it was given.
 * - `fold` (module.c): stats.fold's logarithm per duration.
 * - `configure` (config.c): where pfio.trace.files' settings and classes are found.
 *
 * The files: config.c (the settings, the interned names, the slots of pfio's classes),
 * reader.c (the `CountedReader` type), open.c (the `ReaderOpen` type), module.c (`fold` and
 * the module's init). Globals shared between them carry the `pfio_trace_` prefix; all else
 * is static to its file.
 *
 * pfio.trace.extension picks this module where it was built, the pure-Python path
 * otherwise; both record the same counts, histograms and spans (tests/trace run on both).
 */
#ifndef PFIO_TRACE_NATIVE_H
#define PFIO_TRACE_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>

/* ---- config.c: settings, names, slots -------------------------------------------------- */

/* The attribute and setting names the module looks up, interned once at import
 * (pfio_trace_intern_names): X(field, text). */
#define PFIO_TRACE_NAMES(X) X(raw, "raw") X(nbytes, "nbytes") X(compact, "compact") \
    X(readers, "readers") X(reader_stats, "reader_stats") X(recorder, "_recorder") \
    X(tls, "tls") X(state, "state") X(depth, "depth") X(spans, "spans") \
    X(dropped, "dropped") X(file, "file") X(raw_limit, "RAW_LIMIT") \
    X(max_spans, "MAX_SPANS") X(file_span, "FILE_SPAN")

typedef struct {
#define PFIO_TRACE_NAME_FIELD(field, text) PyObject *field;
    PFIO_TRACE_NAMES(PFIO_TRACE_NAME_FIELD)
#undef PFIO_TRACE_NAME_FIELD
} PfioTraceNames;

extern PfioTraceNames pfio_trace_names;

/* Intern the names: 0, or -1 with an error set. */
int pfio_trace_intern_names(void);

/* configure(namespace): pfio.trace.files' namespace, where the settings are read at each
 * use and the slots' classes are found (the module's method). */
PyObject *pfio_trace_configure(PyObject *module, PyObject *namespace);

/* The object named `key` in pfio.trace.files (borrowed), or NULL with an error set. */
PyObject *pfio_trace_setting(PyObject *key);

/* The integer named `key` in pfio.trace.files, or -1 with an error set. */
Py_ssize_t pfio_trace_limit(PyObject *key);

/* A __slots__ attribute of a pfio class (OpStats, ThreadState), read and written through
 * its member descriptor's PyMemberDef for objects of exactly that class (no look-up in the
 * type: the same as Python's own access, a few times faster), by name for any other. */
typedef struct {
    const char *owner;  /* the class, by its name in pfio.trace.files */
    PyObject **name;
    PyTypeObject *type;  /* NULL until configure() found the member */
    PyObject *descr;  /* the member descriptor, which holds the member */
    PyMemberDef *member;
} Slot;

/* OpStats.raw, OpStats.nbytes; ThreadState.depth, .readers, .spans, .dropped */
extern Slot pfio_trace_slot_raw, pfio_trace_slot_nbytes, pfio_trace_slot_depth,
    pfio_trace_slot_readers, pfio_trace_slot_spans, pfio_trace_slot_dropped;

/* obj.<slot> (a new reference), or NULL with an error set. */
static inline PyObject *
get(PyObject *obj, Slot *slot)
{
    if (Py_TYPE(obj) == slot->type) {
        return PyMember_GetOne((const char *)obj, slot->member);
    }
    return PyObject_GetAttr(obj, *slot->name);
}

/* obj.<slot> += n, for counters (ints): 0, or -1 with an error set. */
int pfio_trace_add(PyObject *obj, Slot *slot, Py_ssize_t n);

/* now, on the clock of time.perf_counter_ns */
static inline int64_t
now_ns(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t t;
    (void)PyTime_PerfCounterRaw(&t);
    return (int64_t)t;
#else
    return (int64_t)_PyTime_GetPerfCounter();  /* the clock of time.perf_counter_ns */
#endif
}

/* ---- reader.c: the CountedReader type -------------------------------------------------- */

/* What a Reader adds after io.BufferedReader's own fields (at pfio_trace_reader_offset). */
typedef struct {
    PyObject *rs;  /* where reads are counted: an OpStats or a FileTotals */
    PyObject *st;  /* spans level: the ThreadState its span goes to */
    PyObject *scheme;
    PyObject *url;
    int64_t opened;  /* spans level: when it was opened; its span is kept once it is closed */
    char has_span;  /* a span is still to be kept at close */
    long long reads, read_bytes, read_ns;  /* the file's own totals, for its span */
} ReaderFields;

extern PyTypeObject *pfio_trace_reader_type;  /* CountedReader, once the module is made */
extern Py_ssize_t pfio_trace_reader_offset;

#define FIELDS(o) ((ReaderFields *)((char *)(o) + pfio_trace_reader_offset))

/* Make CountedReader and add it to `module`: 0, or -1 with an error set. */
int pfio_trace_add_reader_type(PyObject *module);

/* ---- open.c: the ReaderOpen type ------------------------------------------------------- */

/* Ready ReaderOpen and add it to `module`: 0, or -1 with an error set. */
int pfio_trace_add_open_type(PyObject *module);

#endif  /* PFIO_TRACE_NATIVE_H */
