"""A ``$SACREBLEU`` folder as sacrebleu leaves it after a download: wmt22 en-de (a WMT
2021+ XML release) and wmt19 de-en (SGML), for the command line's test-set tests."""

from __future__ import annotations

from pathlib import Path

# wmt22 en-de: translator A is the reference sacrebleu scores.
XML = """<?xml version="1.0" encoding="utf-8"?>
<dataset id="wmttest2022">
  <collection id="general">
    <doc origlang="en" id="a1">
      <src lang="en"><p><seg id="1">The house is red.</seg><seg id="2">I like it.</seg></p></src>
      <ref lang="de" translator="A"><p><seg id="1">Das Haus ist rot.</seg><seg id="2">Ich mag es.</seg></p></ref>
      <ref lang="de" translator="B"><p><seg id="1">Das Haus ist rot!</seg><seg id="2">Es gefällt mir.</seg></p></ref>
    </doc>
    <doc origlang="de" id="a2">
      <src lang="en"><p><seg id="1">Good evening.</seg></p></src>
      <ref lang="de" translator="A"><p><seg id="1">Guten Abend.</seg></p></ref>
      <ref lang="de" translator="B"><p><seg id="1">Schönen Abend.</seg></p></ref>
    </doc>
  </collection>
</dataset>
"""
XML_HYP = ["Das Haus ist rot.", "Ich mag das.", "Guten Abend!"]

#: What sacrebleu extracts from :data:`XML` into its per-field files.
XML_FIELDS = {"src": ["The house is red.", "I like it.", "Good evening."],
              "ref-A": ["Das Haus ist rot.", "Ich mag es.", "Guten Abend."],
              "ref-B": ["Das Haus ist rot!", "Es gefällt mir.", "Schönen Abend."],
              "docid": ["a1", "a1", "a2"], "origlang": ["en", "en", "de"]}


def write_lines(path: Path, lines) -> None:
    """``lines`` as a text file, one a line (folders made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def sacrebleu_folder(root: Path, docs: list, refs: list[str]) -> Path:
    """Fill ``root`` as ``$SACREBLEU``: wmt22 en-de from :data:`XML`, and wmt19 de-en whose
    documents are ``docs`` (``(docid, origlang, source segments)``) with references
    ``refs``, raw SGML and extracted fields alike; the archives are present, so sacrebleu
    never fetches them."""
    from sacrebleu.dataset import DATASETS

    wmt22 = DATASETS["wmt22"]
    raw = root / "wmt22" / "raw"
    (raw / wmt22.langpairs["en-de"][0]).parent.mkdir(parents=True)
    (raw / wmt22.langpairs["en-de"][0]).write_text(XML, encoding="utf-8")
    write_lines(raw / wmt22._get_tarball_filename(wmt22.data[0]), ["present"])
    for field, lines in XML_FIELDS.items():
        write_lines(root / "wmt22" / f"wmt22.en-de.{field}", lines)

    sets = root / "wmt19"
    fields = {"src": [s for _, _, segs in docs for s in segs], "ref": refs,
              "docid": [d for d, _, segs in docs for _ in segs],
              "genre": ["news"] * len(refs),
              "origlang": [o for _, o, segs in docs for _ in segs]}
    for field, lines in fields.items():
        write_lines(sets / f"wmt19.de-en.{field}", lines)
    sgm = ['<srcset setid="newstest2019" srclang="any">']
    for docid, origlang, segs in docs:
        sgm.append(f'<doc sysid="ref" docid="{docid}" genre="news" origlang="{origlang}">')
        sgm += ["<p>"] + [f'<seg id="{k}">{s}</seg>' for k, s in enumerate(segs, 1)] + ["</p>"]
        sgm.append("</doc>")
    write_lines(sets / "raw" / DATASETS["wmt19"].langpairs["de-en"][0], sgm + ["</srcset>"])
    write_lines(sets / "raw" / "wmt19.test.tgz", ["present"])
    return root
