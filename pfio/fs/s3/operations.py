"""Listing, removing, renaming and copying on S3 (a mixin of :class:`pfio.fs.s3.S3`).

Listings page through ``ListObjectsV2``; "directories" are common prefixes, and a
recursive listing names the keys (as PFIO 2.x's did: the prefixes between them are not
entries). A recursive remove deletes in batches of 1,000 keys per request. A copy is
server-side (CopyObject; a multipart UploadPartCopy above 5 GiB), also between buckets of
one endpoint and one set of credentials; a rename is such a copy followed by a delete; a
prefix is renamed key by key.
"""

from __future__ import annotations

import builtins
import errno
import logging
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..._uri import is_relative_name, parent_directories
from ..globbing import has_magic
from ..stat import FileStat
from .engine import Copied, Deleted, Part
from .errors import NoSuchObjectError, may_have_been_applied
from .listing import checked_pages
from .stat import S3ObjectStat, S3PrefixStat
from .writer import Completion

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..base import FS
    from .connection import S3Connection
    from .engine import Engine, Head, ListPage
    from .settings import S3Settings

logger = logging.getLogger(__name__)

#: the largest object one CopyObject request may copy
COPY_LIMIT = 5 << 30


class S3Operations:
    """``list``, ``remove``, ``rename``, the server-side copy and ``glob`` of
    :class:`pfio.fs.s3.S3`."""

    bucket: str
    root: str
    _connection: S3Connection
    copy_limit: int = COPY_LIMIT
    copy_part_size: int = 512 << 20
    #: keys per DeleteObjects request (1000 is the S3 maximum)
    delete_batch: int = 1000
    #: keys per listing page (None: the server's default, 1000 on AWS)
    list_page_size: int | None = None

    if TYPE_CHECKING:  # provided by S3
        def _key(self, path: str) -> str: ...
        def _confined(self, path: str) -> str: ...
        def _url(self, key: str) -> str: ...
        def _request(self, method: str, key: str, send: Callable[[Engine], Any]) -> Any: ...
        def _head(self, key: str) -> Head | None: ...
        def _list_page(self, key: str, prefix: str, delimiter: str | None = None,
                       max_keys: int | None = None, token: str | None = None) -> ListPage: ...
        def exists(self, path: str) -> bool: ...

    def _pages(self, prefix: str, delimiter: str | None,
               max_keys: int | None = None) -> Iterator[ListPage]:
        """The checked pages of the listing of ``prefix`` (see
        :func:`pfio.fs.s3.listing.checked_pages`); only the first with ``max_keys``."""
        page_size = max_keys or self.list_page_size
        return checked_pages(
            lambda token: self._list_page(prefix, prefix, delimiter, page_size, token),
            prefix, self._url(prefix), one=bool(max_keys))

    def _prefix_exists(self, key: str) -> bool:
        """True when some object is under ``key/`` (or ``key`` is "" and the bucket exists)."""
        if not key:
            self._list_page("", "", max_keys=1)  # FileNotFoundError if no bucket
            return True
        prefix = key if key.endswith("/") else key + "/"
        page = next(self._pages(prefix, None, max_keys=1))
        return bool(page.entries or page.prefixes)

    def list(self, path: str = "", recursive: bool = False,
             detail: bool = False) -> Iterator[Any]:
        """List the prefix ``path/``; see :meth:`pfio.fs.base.FS.list`.

        A recursive listing names every key below ``path/`` (a zero-byte "directory
        marker" key ``d/`` as the directory ``d/``), not the prefixes between them, as
        PFIO 2.x did (:func:`pfio.fs.stat.with_implied_directories` adds them). The root of
        the filesystem lists empty while nothing is under it yet (its prefix needs no
        creating, as :meth:`mkdir` is a no-op).

        Raises:
            FileNotFoundError: nothing is under ``path`` (or the bucket does not exist).
            NotADirectoryError: ``path`` is an object.
        """
        key = self._key(path)
        prefix = key if not key or key.endswith("/") else key + "/"
        found = False  # anything under the prefix, listed or not (a marker, a skipped key)
        for page in self._pages(prefix, None if recursive else "/"):
            found = found or bool(page.entries or page.prefixes)
            for name, stat in self._page_entries(page, len(prefix)):
                if detail:
                    yield stat
                else:
                    yield name + "/" if stat.isdir() else name
        if not found and key.rstrip("/") != self.root:
            if self._head(key.rstrip("/")) is not None:
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(key))
            raise FileNotFoundError(errno.ENOENT, "no such prefix", self._url(prefix))

    def _page_entries(self, page: ListPage, skip: int) -> Iterator[tuple[str, FileStat]]:
        """The names (``skip`` characters of prefix off each key) and stats of one page: its
        common prefixes and keys, a marker key (``d/``) as a directory, the listed prefix's
        own marker left out."""
        for common in page.prefixes:
            if not self._nameable(common, skip):
                continue
            name = common[skip:].rstrip("/")
            yield name, S3PrefixStat(name)
        for obj in page.entries:
            name = obj.key[skip:]
            if not name or not self._nameable(obj.key, skip):
                continue
            if name.endswith("/"):
                yield name[:-1], S3PrefixStat(name[:-1])
            else:
                yield name, S3ObjectStat(name, obj)

    def _nameable(self, key: str, skip: int) -> bool:
        """Whether the listed ``key`` has a name pfio opens it by: a key with an empty,
        ``.`` or ``..`` component below the listed prefix (``data//x``, ``data/../x``) would
        open another object (names are normalised), or land outside the directory a
        recursive copy writes to, so it is skipped with a warning."""
        if is_relative_name(key[skip:]):
            return True
        logger.warning("%s: skipping a key with an empty, '.' or '..' path component (pfio "
                       "cannot open it by its name)", self._url(key))
        return False

    def remove(self, path: str, recursive: bool = False) -> None:
        """Remove the object ``path``, or with ``recursive`` everything under ``path/``.

        Raises:
            FileNotFoundError: neither exists (a :class:`~pfio.fs.s3.errors.NoSuchObjectError`
                saying ``No such S3 object: 'path'``, as PFIO 2.x did).
            OSError: ``path`` is a non-empty prefix and ``recursive`` is false (ENOTEMPTY).
        """
        key = self._key(path).rstrip("/")
        bucket = self.bucket
        if key and self._head(key) is not None:
            self._request("DELETE", key, lambda engine: engine.delete_object(bucket, key))
            return
        prefix = key + "/" if key else ""
        keys = [obj.key for page in self._pages(prefix, None) for obj in page.entries]
        if not keys:
            raise NoSuchObjectError.of(path, self._url(key))
        if not recursive and keys != [prefix]:
            raise OSError(errno.ENOTEMPTY, "directory not empty", self._url(prefix))
        self._delete_keys(keys, prefix)

    def _delete_keys(self, keys: builtins.list[str], prefix: str) -> None:
        """Delete ``keys`` in batches (``prefix`` names them in errors).

        Raises:
            OSError: some could not be deleted (EIO).
        """
        bucket = self.bucket
        for i in range(0, len(keys), self.delete_batch):
            batch = keys[i:i + self.delete_batch]

            def send(engine: Engine, batch: builtins.list[str] = batch) -> Deleted:
                return engine.delete_objects(bucket, batch)

            result = self._request("POST", prefix, send)
            failed = result.failed
            if failed:
                first = failed[0]
                raise OSError(errno.EIO, f"could not delete {len(failed)} objects, e.g. "
                              f"{first.key}: {first.code}", self._url(prefix))

    def rename(self, src: str, dst: str) -> None:
        """Copy the object ``src`` to ``dst`` on the server, then delete ``src``; or, when
        ``src`` is a prefix, copy each key under ``src/`` to ``dst/``, then delete them (as
        PFIO 2.x's ``Path.rename`` did). A prefix is not renamed atomically: until the last
        delete, both names list keys; when a copy fails, the copies made are deleted and
        ``src`` is left as it was.

        Raises:
            FileNotFoundError: nothing is at ``src``.
            NotADirectoryError: ``src`` is a prefix and ``dst`` an object.
            IsADirectoryError: ``src`` is an object and keys are under ``dst/``.
            OSError: ``src`` is a prefix and ``dst/`` holds keys (ENOTEMPTY) or is below
                ``src`` (EINVAL); ``src`` is the root (EINVAL).
        """
        skey, dkey = self._key(src).rstrip("/"), self._key(dst).rstrip("/")
        head = self._head(skey) if skey else None
        if head is None:
            if skey and self._prefix_exists(skey):
                self._rename_prefix(skey, dkey)
                return
            if not skey:
                raise OSError(errno.EINVAL, "cannot rename the root", self._url(skey))
            raise FileNotFoundError(errno.ENOENT, "no such object", self._url(skey))
        if skey == dkey:
            return
        if dkey and self._prefix_exists(dkey):
            raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(dkey + "/"))
        self._copy(skey, dkey, head.size, etag=head.etag or None)
        bucket = self.bucket
        self._request("DELETE", skey, lambda engine: engine.delete_object(bucket, skey))

    def _rename_prefix(self, skey: str, dkey: str) -> None:
        if skey == dkey:
            return
        if dkey and self._head(dkey) is not None:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", self._url(dkey))
        if dkey.startswith(skey + "/"):
            raise OSError(errno.EINVAL, f"cannot move a prefix into itself: {self._url(skey)}",
                          self._url(dkey))
        if self._prefix_exists(dkey):
            raise OSError(errno.ENOTEMPTY, "directory not empty", self._url(dkey + "/"))
        prefix = skey + "/"
        objects = [obj for page in self._pages(prefix, None) for obj in page.entries]
        copied: list[str] = []
        try:
            for obj in objects:
                target = f"{dkey}/{obj.key[len(prefix):]}"
                self._copy(obj.key, target, obj.size, etag=obj.etag or None)
                copied.append(target)
        except BaseException:
            try:
                self._delete_keys(copied, dkey + "/")
            except OSError as exc:
                logger.warning("%s: the copies made before a failed rename are left: %s",
                               self._url(dkey + "/"), exc)
            raise
        self._delete_keys([obj.key for obj in objects], prefix)

    def _copy(self, skey: str, dkey: str, size: int, source_bucket: str | None = None,
              etag: str | None = None) -> None:
        """Copy the object ``skey`` (``size`` bytes, ETag ``etag`` when known) of
        ``source_bucket`` (default: this bucket) to ``dkey`` on the server: one CopyObject
        up to :attr:`copy_limit`, else a multipart copy (UploadPartCopy). It returns only
        once the copy is confirmed: by a ``CopyObjectResult``, or, when the answer was
        unclear (lost, a 5xx, unreadable), by a HEAD of ``dkey`` showing ``size`` bytes
        and ``etag``.

        Raises:
            OSError: the copy failed, or whether it was made is unknown (the message says
                which).
        """
        bucket, source = self.bucket, source_bucket or self.bucket
        if size > self.copy_limit:
            self._multipart_copy(skey, dkey, size, source)
            return
        unsure = False

        def copy(engine: Engine) -> Copied:
            nonlocal unsure
            try:
                return engine.copy_object(bucket, dkey, source, skey)
            except Exception as exc:
                unsure = unsure or may_have_been_applied(exc)
                raise

        try:
            self._request("PUT", dkey, copy)
        except OSError as failure:
            if not unsure:
                raise
            self._confirm_copy(dkey, size, etag, failure)

    def _confirm_copy(self, dkey: str, size: int, etag: str | None,
                      failure: OSError) -> None:
        """Look at ``dkey`` after a copy whose answer was unclear (``failure``): return when
        it holds the copy (``size`` bytes, ETag ``etag``), else raise an ``OSError``."""
        url = self._url(dkey)
        try:
            head = self._head(dkey)
        except OSError as exc:
            raise OSError(errno.EIO, f"the copy to {url} failed ({failure.strerror}) and "
                          f"whether it was made could not be checked ({exc.strerror}): "
                          "the outcome is unknown", url) from failure
        if head is None:
            raise OSError(errno.EIO, f"the copy failed ({failure.strerror}) and nothing is "
                          "at its destination: nothing was copied", url) from failure
        found = head.etag.strip('"')
        if etag is not None and found == etag.strip('"') and head.size == size:
            logger.info("%s: the answer to a copy was unclear; the copy is there (ETag %s)",
                        url, found)
            return
        raise OSError(errno.EIO, f"the copy failed ({failure.strerror}) and the object at "
                      f"its destination (ETag {found}, {head.size} bytes) cannot "
                      "be told to be the copy: the outcome is unknown", url) from failure

    def _multipart_copy(self, skey: str, dkey: str, size: int,
                        source_bucket: str | None = None) -> None:
        """Copy ``skey`` (``size`` bytes, of ``source_bucket``, default this bucket) to
        ``dkey`` in parts; the upload is completed as a writer's is (its outcome checked
        when the answer is lost), else aborted."""
        bucket, source = self.bucket, source_bucket or self.bucket
        upload = self._request("POST", dkey, lambda engine: engine.create_multipart_upload(
            bucket, dkey, checksum=None)).upload_id
        completion = Completion(self._connection, dkey, upload)
        try:
            step = max(self.copy_part_size, -(-size // 10000))
            for number, start in enumerate(range(0, size, step), 1):
                stop = min(size, start + step) - 1

                def copy(engine: Engine, number: int = number, start: int = start,
                         stop: int = stop) -> Copied:
                    return engine.upload_part_copy(bucket, dkey, upload, number, source, skey,
                                                   f"bytes={start}-{stop}")

                result = self._request("PUT", dkey, copy)
                completion.add(Part(number=number, etag=result.etag), stop + 1 - start)
            completion.complete()
        except BaseException:
            if completion.may_be_published:
                raise
            self._request("DELETE", dkey, lambda engine: engine.abort_multipart_upload(
                bucket, dkey, upload))
            raise

    def _copy_from(self, source: FS, src: str, dst: str, size: int | None = None) -> bool:
        """Copy the object ``src`` of ``source`` to ``dst`` on the server (CopyObject; a
        multipart UploadPartCopy above 5 GiB) when ``source`` is on S3 too, reached through
        the same endpoint with the same credentials (any bucket); else return False.
        ``FS.copy``, :func:`pfio.copy` and :func:`pfio.sync` come here first."""
        if not isinstance(source, S3Operations) or \
                not _same_account(source._connection.settings, self._connection.settings):
            return False
        skey, dkey = source._key(src), self._key(dst)
        if not dkey or dkey.endswith("/"):
            raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(dkey))
        if not skey or skey.endswith("/"):
            raise IsADirectoryError(errno.EISDIR, "is a directory", source._url(skey))
        if size is None:
            size = source._object_size(skey)
        if (source.bucket, skey) == (self.bucket, dkey):
            return True  # a copy onto itself changes nothing (S3 would refuse it)
        try:
            self._copy(skey, dkey, size, source.bucket)
        except FileNotFoundError:
            source._object_size(skey)  # names the source when it is the one missing
            raise
        return True

    def _object_size(self, key: str) -> int:
        """The size of object ``key``.

        Raises:
            IsADirectoryError: ``key`` is a prefix.
            FileNotFoundError: nothing is there.
        """
        head = self._head(key)
        if head is not None:
            return head.size
        if self._prefix_exists(key):
            raise IsADirectoryError(errno.EISDIR, "is a directory", self._url(key))
        raise FileNotFoundError(errno.ENOENT, "no such object", self._url(key))

    def glob(self, pattern: str) -> builtins.list[str]:
        """As :meth:`pfio.fs.base.FS.glob`, with one recursive listing under the pattern's
        literal leading directories instead of one listing per directory level."""
        parts = [p for p in self._confined(pattern).split("/") if p not in ("", ".")]
        if not parts:
            return []
        if not any(has_magic(p) for p in parts):
            path = "/".join(parts)
            return [path] if self.exists(path) else []
        fixed = 0
        while fixed < len(parts) - 1 and not has_magic(parts[fixed]):
            fixed += 1
        base = "/".join(parts[:fixed])
        matcher = re.compile(_glob_regex(parts[fixed:])).fullmatch
        try:
            names = {name.rstrip("/") for name in self.list(base, recursive=True)}
        except (FileNotFoundError, NotADirectoryError):
            return []
        names |= parent_directories(names)  # the prefixes between the keys
        return sorted(posixpath.join(base, n) if base else n for n in names if matcher(n))


def _same_account(a: S3Settings, b: S3Settings) -> bool:
    """Whether a request made with settings ``b`` may name objects reached with ``a``: the
    same endpoint and the same credentials (given, or from the same profile and
    environment), so that a server-side copy between them reads what ``a`` would read."""
    return (a.endpoint, a.profile, a.secrets()) == (b.endpoint, b.profile, b.secrets())


def _glob_regex(parts: list[str]) -> str:
    """A regex for a relative path matching ``parts`` (``**`` spans directories)."""
    pieces = []
    for i, part in enumerate(parts):
        if part == "**":
            pieces.append(r"[^/]+(?:/[^/]+)*" if i == len(parts) - 1 else r"(?:[^/]+/)*")
        else:
            pieces.append(_component_regex(part) + ("/" if i < len(parts) - 1 else ""))
    return "".join(pieces)


def _component_regex(part: str) -> str:
    """``*``, ``?`` and ``[...]`` of one path component, not crossing ``/``."""
    out = []
    i = 0
    while i < len(part):
        c = part[i]
        end = part.find("]", i + 2) if c == "[" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif end > 0:
            body = part[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
