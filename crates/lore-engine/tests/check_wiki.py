"""Independent check of a wiki written by `lore export markdown` (SPEC 5.7), using only Python's json,
hashlib and a YAML parser: every claim id recomputed with OpenKB's formula, every frontmatter parsed as
YAML, keys in order with one line of JSON each, slugs following the rule, and every wikilink resolving."""

import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path

import yaml

ORDER = ["type", "description", "sources", "aliases", "claims"]
STATUSES = {"proposed", "validated", "superseded", "abandoned"}
AUTHORITIES = {"first_party", "document", "assistant", None}
TYPES = {"Person", "Organization", "Project", "Concept", "Summary"}
# OpenKB's own as_of pattern (openkb/claims.py).
AS_OF = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?$")


def claim_id(text, as_of, source_anchor):
    payload = json.dumps(
        [text.strip(), as_of.strip(), source_anchor.strip()],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def slug(name):
    text = unicodedata.normalize("NFKC", name).lower()
    return re.sub(r"[^\w-]", "-", text).strip("-") or "page"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main(wiki):
    wiki = Path(wiki)
    pages = sorted(p for folder in ("entities", "concepts", "summaries") for p in (wiki / folder).glob("*.md"))
    if not pages:
        fail("no pages")
    n_claims = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            fail(f"{page}: no frontmatter")
        head, _, body = text[4:].partition("\n---\n")
        data = yaml.safe_load(head)
        keys = list(data.keys())
        expected = [k for k in ORDER if k in data]
        if keys[: len(expected)] != expected or keys[len(expected):] not in ([], ["lore"]):
            fail(f"{page}: keys out of order: {keys}")
        if data["type"] not in TYPES:
            fail(f"{page}: type {data['type']!r}")
        if ("sources" in data) != (data["type"] == "Summary"):
            fail(f"{page}: sources belong to summary pages only")
        lines = head.split("\n")
        if len(lines) != len(keys):
            fail(f"{page}: a value spans more than one line")
        for line in lines:
            key, _, value = line.partition(": ")
            if json.loads(value) != data[key]:
                fail(f"{page}: {key} reads differently as JSON and as YAML")
        if data["type"] != "Summary":
            title = next(l[2:] for l in body.split("\n") if l.startswith("# "))
            if not re.fullmatch(re.escape(slug(title)) + r"(-\d+)?", page.stem):
                fail(f"{page}: slug {page.stem!r} does not follow the rule for {title!r}")
        ids = set()
        for claim in data["claims"]:
            n_claims += 1
            expected_id = claim_id(claim["text"], claim["as_of"], claim["source_anchor"])
            if claim["id"] != expected_id:
                fail(f"{page}: claim {claim['id']} should have id {expected_id}")
            if not claim["text"].strip() or not claim["source_anchor"].strip():
                fail(f"{page}: claim {claim['id']} has an empty text or source_anchor")
            if not AS_OF.fullmatch(claim["as_of"].strip()):
                fail(f"{page}: claim {claim['id']} has an as_of OpenKB cannot read: {claim['as_of']!r}")
            if claim["status"] not in STATUSES or claim["authority"] not in AUTHORITIES:
                fail(f"{page}: claim {claim['id']} has status {claim['status']} authority {claim['authority']}")
            if "lore" not in claim:
                fail(f"{page}: claim {claim['id']} has no lore object")
            ids.add(claim["id"])
        for claim in data["claims"]:
            for other in claim["supersedes"] + claim["superseded_by"]:
                if other not in ids:
                    fail(f"{page}: claim {claim['id']} links to {other}, not on the page")
        for target in re.findall(r"\[\[([^\]|]+)(?:\|[^\]]*)?\]\]", body):
            if not (wiki / (target + ".md")).is_file():
                fail(f"{page}: wikilink [[{target}]] does not resolve")
    index = (wiki / "index.md").read_text(encoding="utf-8")
    for section in ("## Entities", "## Concepts"):
        if section not in index:
            fail(f"index.md has no {section}")
    for target in re.findall(r"\[\[([^\]|]+)\]\]", index):
        if not (wiki / (target + ".md")).is_file():
            fail(f"index.md: [[{target}]] does not resolve")
    print(f"{len(pages)} pages, {n_claims} claims: ids ok")


if __name__ == "__main__":
    main(sys.argv[1])
