#!/usr/bin/env python3
"""Pages a cascade delete writes, per b-tree: the measure behind a SQLite commit's cost.

A commit appends every page its transaction changed to the write-ahead log and syncs it, so the
pages a write touches are what its commit costs, whatever the machine. This script copies a database
a `lore bench --keep` run left, deletes one meeting from the copy with the given `lore` binary, maps
every frame of the log to the b-tree (table or index) its page belongs to (SQLite's `dbstat`), and
repeats for several meetings, each on a fresh copy. The counts do not depend on the machine or its
load.

    ./target/release/lore bench --scale 1 --keep      # prints the kept database's path
    scripts/pages-per-write.py ./target/release/lore /tmp/lore-bench-PID-1.db

The copy is opened by `lore` once before the delete (a read, which runs any pending migration) and
its log emptied, so the log then holds the delete's transaction alone.
"""

import argparse
import collections
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile


def frames(db):
    """The page number of every frame in the database's write-ahead log."""
    with open(db + "-wal", "rb") as log:
        data = log.read()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    pages, offset = [], 32
    while offset + 24 + page_size <= len(data):
        pages.append(struct.unpack(">I", data[offset : offset + 4])[0])
        offset += 24 + page_size
    return pages


def btrees(db):
    connection = sqlite3.connect(db)
    try:
        return dict(
            (page, name) for name, page in connection.execute("SELECT name, pageno FROM dbstat")
        )
    except sqlite3.OperationalError as error:
        sys.exit(f"this Python's SQLite has no dbstat table ({error}); use one built with it")
    finally:
        connection.close()


def lore(binary, db, owner, *args):
    return subprocess.run(
        [binary, "--db", db, "--owner", owner, *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lore", help="the lore binary")
    parser.add_argument("database", help="a database a `lore bench --keep` run left")
    parser.add_argument("--owner", default="bench")
    parser.add_argument("--deletes", type=int, default=8, help="meetings to delete, one per copy")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        base = os.path.join(folder, "base.db")
        shutil.copyfile(arguments.database, base)
        meetings = json.loads(lore(arguments.lore, base, arguments.owner, "meetings", "--json"))
        connection = sqlite3.connect(base)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        step = max(1, len(meetings) // arguments.deletes)
        chosen = meetings[step // 2 :: step][: arguments.deletes]
        totals, per_tree = [], collections.Counter()
        copy = os.path.join(folder, "copy.db")
        for meeting in chosen:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(copy + suffix):
                    os.remove(copy + suffix)
            shutil.copyfile(base, copy)
            lore(arguments.lore, copy, arguments.owner, "delete", "meeting", meeting["id"])
            pages = set(frames(copy))
            owner_of = btrees(copy)
            totals.append(len(pages))
            per_tree.update(owner_of.get(page, "(free or new)") for page in pages)
    print(f"pages per delete over {len(totals)} deletes: mean {sum(totals) / len(totals):.1f}, "
          f"min {min(totals)}, max {max(totals)}")
    for name, count in per_tree.most_common(25):
        print(f"{count / len(totals):8.1f}  {name}")


if __name__ == "__main__":
    main()
