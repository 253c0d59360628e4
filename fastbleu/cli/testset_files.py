"""sacrebleu's raw test-set files, read as untrusted input: one line for a damaged one.

``$SACREBLEU`` holds what sacrebleu downloaded, but anything can be there: a
truncated download, another program's file, a hostile one.  Its raw files are
read here, not by sacrebleu's own parser, so that

* only a regular file is opened (never a FIFO, which would block for good), and
  no more than :data:`MAX_RAW_BYTES` of it (decompressed, for ``.gz``);
* a WMT 2021+ XML release is parsed by lxml with entity substitution, DTD
  loading and network access off, and a document type declaration (where
  entities are declared: external ones, "billion laughs") is refused;
* every way a file can be malformed (not XML, truncated, not UTF-8, two source
  languages, a ``<doc>`` without ``origlang``, a segment id that is not an
  integer ...) is an :class:`~fastbleu.errors.InputError` naming the file and
  what is wrong, with the ``sacrebleu`` command that fetches a fresh copy.

:func:`wmt_xml_fields` gives the fields of an XML release exactly as
sacrebleu's ``WMTXMLDataset._unwrap_wmt21_or_later`` does for a well-formed
file (a test holds the two against each other).
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from collections import defaultdict

from fastbleu.errors import InputError

#: The largest raw file read (WMT's are a few megabytes; 2022's biggest XML is under 20 MB).
MAX_RAW_BYTES = 256 << 20

_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))


def damaged(path: str, name: str, langpair: str | None, what: str) -> InputError:
    """The one line for a raw file that cannot be used, with the command for a fresh copy
    (sacrebleu downloads again only once the old copy is gone)."""
    folder = os.path.dirname(os.path.dirname(path)) if os.path.basename(
        os.path.dirname(path)) == "raw" else os.path.dirname(path)
    pair = f" -l {langpair}" if langpair else ""
    return InputError(f"{path}: {what}; the test set file is damaged or not sacrebleu's: "
                      f"delete {folder} and fetch a fresh copy with: "
                      f"sacrebleu --download {name}{pair}")


def read_raw(path: str, name: str, langpair: str | None) -> bytes:
    """The bytes of a raw file (decompressed for ``.gz``), or the one-line InputError."""
    try:
        handle = os.open(path, _READ_FLAGS)
    except OSError as error:
        raise damaged(path, name, langpair,
                      f"cannot be opened ({error.strerror or error})") from None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode):
            raise damaged(path, name, langpair, "is not a regular file")
        if status.st_size > MAX_RAW_BYTES:
            raise damaged(path, name, langpair, f"is {status.st_size} bytes, more than any "
                          f"test set file ({MAX_RAW_BYTES} at most)")
        chunks, size = [], 0
        while True:
            chunk = os.read(handle, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_RAW_BYTES:
                raise damaged(path, name, langpair, f"is more than {MAX_RAW_BYTES} bytes")
            chunks.append(chunk)
    except OSError as error:
        raise damaged(path, name, langpair,
                      f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(handle)
    data = b"".join(chunks)
    if path.endswith(".gz"):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                data = stream.read(MAX_RAW_BYTES + 1)
        except (OSError, EOFError, zlib.error) as error:
            raise damaged(path, name, langpair, f"is not a whole gzip file ({error})") from None
        if len(data) > MAX_RAW_BYTES:
            raise damaged(path, name, langpair,
                          f"holds more than {MAX_RAW_BYTES} bytes decompressed")
    return data


def sgm_lines(path: str, name: str, langpair: str | None) -> list[str]:
    """The lines of an SGML release as ``open(path, encoding="utf-8", newline="\\n")``
    gives them, or the one-line InputError (not UTF-8, not a regular file ...)."""
    data = read_raw(path, name, langpair)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise damaged(path, name, langpair, f"is not UTF-8 (byte {data[error.start]:#04x} at "
                      f"offset {error.start})") from None
    return list(io.StringIO(text, newline="\n"))


def _parse_xml(path: str, name: str, langpair: str | None):
    from lxml import etree

    data = read_raw(path, name, langpair)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             dtd_validation=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        raise damaged(path, name, langpair, f"is not well-formed XML ({error})") from None
    except ValueError as error:  # e.g. an encoding declaration lxml refuses
        raise damaged(path, name, langpair, f"is not XML lxml can read ({error})") from None
    if root is None:
        raise damaged(path, name, langpair, "holds no XML element")
    info = root.getroottree().docinfo
    if info.internalDTD is not None or info.externalDTD is not None or info.doctype:
        raise damaged(path, name, langpair, "declares a document type (entities are not "
                      "expanded: a WMT release has none)")
    return root


def _segment_id(seg, path, name, langpair) -> int:
    value = seg.get("id")
    try:
        return int(value)
    except (TypeError, ValueError):
        what = "has no id" if value is None else f"has the id {value!r}, not an integer"
        raise damaged(path, name, langpair,
                      f"a <seg> on line {seg.sourceline} {what}") from None


def _field_by_translator(translator) -> str:
    return f"ref:{translator}" if translator else "ref"


def wmt_xml_fields(path: str, name: str, langpair: str | None) -> dict[str, list]:
    """The fields of a WMT 2021+ XML release (``src``, ``ref:<translator>``..., ``docid``,
    ``origlang``, systems, ``domain``) as sacrebleu unwraps them, or the InputError."""
    root = _parse_xml(path, name, langpair)
    src_langs = {doc.get("lang") for doc in root.iterfind(".//src")}
    ref_docs = list(root.iterfind(".//ref"))
    ref_langs = {doc.get("lang") for doc in ref_docs}
    translators = {doc.get("translator") for doc in ref_docs}
    for role, langs in (("source", src_langs), ("reference", ref_langs)):
        if len(langs) != 1:
            shown = ", ".join(sorted(str(lang) for lang in langs)) or "none"
            raise damaged(path, name, langpair,
                          f"has {len(langs)} {role} languages ({shown}), not one")

    def sentences(doc, where: str) -> dict[int, str | None]:
        return {_segment_id(seg, path, name, langpair): seg.text
                for seg in doc.iterfind(where)}

    src, docids, orig_langs, domains = [], [], [], []
    refs = {_field_by_translator(translator): [] for translator in translators}
    systems = defaultdict(list)
    seen_domain = False
    for doc in root.iterfind(".//doc"):
        if "testsuite" in doc.attrib:
            continue
        for key in ("id", "origlang"):
            if key not in doc.attrib:
                raise damaged(path, name, langpair,
                              f"the <doc> on line {doc.sourceline} has no {key} attribute")
        src_sents = sentences(doc, ".//src//seg")
        trans_to_ref = {ref.get("translator"): {k: v or "" for k, v in
                                                sentences(ref, ".//seg").items()}
                        for ref in doc.iterfind(".//ref")}
        hyps = {hyp.get("system"): {k: v or "" for k, v in sentences(hyp, ".//seg").items()}
                for hyp in doc.iterfind(".//hyp")}
        for seg_id in sorted(src_sents):
            if not any(value.get(seg_id, "") for value in trans_to_ref.values()):
                continue  # no reference for this segment: sacrebleu skips it
            for translator in translators:
                refs[_field_by_translator(translator)].append(
                    trans_to_ref.get(translator, {}).get(seg_id, ""))
            src.append(src_sents[seg_id])
            for system, sents in hyps.items():
                if seg_id not in sents:
                    raise damaged(path, name, langpair,
                                  f"system {system!r} has no segment {seg_id} in the <doc> on "
                                  f"line {doc.sourceline}")
                systems[system].append(sents[seg_id])
            docids.append(doc.attrib["id"])
            orig_langs.append(doc.attrib["origlang"])
            domains.append(doc.get("domain"))
            seen_domain = doc.get("domain") is not None  # sacrebleu's: the last segment's
    fields = {"src": src, **refs, "docid": docids, "origlang": orig_langs, **systems}
    if seen_domain:
        fields["domain"] = domains
    return fields
