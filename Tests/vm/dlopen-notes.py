#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the libraries ELF files name in their dlopen notes.

systemd 256 and later (Debian 13's udev among them) load many of their libraries with
dlopen() instead of linking them (libkmod: the kmod builtin that loads a device's module),
so neither the files' DT_NEEDED nor ldd name them; an image built from those alone has a
udevd that runs but silently lacks the feature. Such files say what they may dlopen in
notes of type 0x407c0c0a from owner "FDO" (the ELF dlopen metadata convention,
https://systemd.io/ELF_DLOPEN_METADATA/): a JSON array of objects with "soname" (a list of
alternatives), "priority" ("required", "recommended" (the default) or "suggested") and
"feature".

Usage: dlopen-notes.py FILE...
         prints one line per entry: PRIORITY FEATURE SONAME [SONAME...] (alternatives,
         preferred first)
       dlopen-notes.py --resolve FILE...
         prints the path of each entry's library on this system, one a line: the first of its
         sonames that ldconfig's cache knows for the same ELF class and machine as the file
         naming it. An entry whose priority is "required" and which none of its sonames
         resolves is an error (exit 1, naming it); other unresolved entries print nothing (a
         system without them lacks only their feature).
Files without such notes (Debian 12's systemd 252, static binaries, non-ELF files) print
nothing. A note that is not the JSON the convention describes is an error (exit 1).
"""

import json
import shutil
import struct
import subprocess
import sys

NOTE_OWNER = b"FDO"
NOTE_TYPE = 0x407C0C0A
SHT_NOTE = 7
PT_NOTE = 4


def machine(data):
    """(ELF class, byte order, e_machine) of the ELF image `data`, or None."""
    if data[:4] != b"\x7fELF":
        return None
    end = "<" if data[5] == 1 else ">"
    return data[4], data[5], struct.unpack_from(end + "H", data, 18)[0]


def notes(data):
    """Yields (owner, type, descriptor) of every note in the ELF image `data`."""
    if data[:4] != b"\x7fELF":
        return
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        phoff, shoff = struct.unpack_from(end + "QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 0x36)
    else:
        phoff, shoff = struct.unpack_from(end + "II", data, 0x1C)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 0x2A)
    # The note areas: sections where there is a section table (also in stripped files), else
    # the PT_NOTE segments.
    areas = []
    for i in range(shnum if shoff else 0):
        base = shoff + i * shentsize
        if is64:
            _, sh_type, _, _, offset, size = struct.unpack_from(end + "IIQQQQ", data, base)
        else:
            _, sh_type, _, _, offset, size = struct.unpack_from(end + "IIIIII", data, base)
        if sh_type == SHT_NOTE:
            areas.append((offset, size))
    if not areas:
        for i in range(phnum if phoff else 0):
            base = phoff + i * phentsize
            if is64:
                p_type, _, offset, _, _, size = struct.unpack_from(end + "IIQQQQ", data, base)
            else:
                p_type, offset, _, _, size = struct.unpack_from(end + "IIIII", data, base)
            if p_type == PT_NOTE:
                areas.append((offset, size))
    for offset, size in areas:
        pos, stop = offset, min(offset + size, len(data))
        while pos + 12 <= stop:
            namesz, descsz, ntype = struct.unpack_from(end + "III", data, pos)
            pos += 12
            name = data[pos : pos + namesz].rstrip(b"\0")
            pos += (namesz + 3) & ~3
            desc = data[pos : pos + descsz]
            pos += (descsz + 3) & ~3
            yield name, ntype, desc


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except IsADirectoryError:
        return b""


def entries(path, data):
    """The dlopen metadata entries of the file at `path` whose contents are `data`."""
    found = []
    for owner, ntype, desc in notes(data):
        if owner != NOTE_OWNER or ntype != NOTE_TYPE:
            continue
        try:
            items = json.loads(desc.rstrip(b"\0").decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise SystemExit(f"dlopen-notes.py: {path}: a dlopen note that is not JSON: {error}")
        if not isinstance(items, list):
            raise SystemExit(f"dlopen-notes.py: {path}: a dlopen note that is not a JSON array")
        for item in items:
            sonames = item.get("soname") if isinstance(item, dict) else None
            if not isinstance(sonames, list) or not sonames or not all(isinstance(s, str) and s for s in sonames):
                raise SystemExit(f"dlopen-notes.py: {path}: a dlopen entry without a list of sonames: {item!r}")
            priority = item.get("priority", "recommended")
            feature = str(item.get("feature", "-")).replace(" ", "_") or "-"
            found.append((priority, feature, sonames))
    return found


def ldconfig_cache():
    """soname -> the paths ldconfig's cache has for it, in the cache's order."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=True).stdout
    known = {}
    for line in listing.splitlines():
        # \tlibkmod.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libkmod.so.2
        name, sep, path = line.strip().partition(" => ")
        if sep:
            known.setdefault(name.split(" ", 1)[0], []).append(path)
    return known


def main(argv):
    resolve = len(argv) > 1 and argv[1] == "--resolve"
    files = argv[2:] if resolve else argv[1:]
    if not files:
        print("usage: dlopen-notes.py [--resolve] FILE...", file=sys.stderr)
        return 2
    known = ldconfig_cache() if resolve else {}
    for path in files:
        data = read(path)
        for priority, feature, sonames in entries(path, data):
            if not resolve:
                print(priority, feature, *sonames)
                continue
            want = machine(data)
            found = next(
                (c for s in sonames for c in known.get(s, []) if machine(read(c)[:64]) == want),
                None,
            )
            if found:
                print(found)
            elif priority == "required":
                print(
                    f"dlopen-notes.py: {path} needs one of {' '.join(sonames)} (feature {feature}, "
                    "priority required), which this system does not have",
                    file=sys.stderr,
                )
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
