#!/usr/bin/env python3
"""Lists the public symbols of a module that have no documentation comment of their own.

Reads symbol graphs (`<Module>.symbols.json`, and `<Module>@<Other>.symbols.json` extension
graphs) as swift-docc-plugin extracts them, and reports each public symbol declared in this
repository's `Sources/` that carries no `///` comment. Implementations of a protocol requirement
that inherit the protocol's documentation (`hash(into:)`, `description`, `init(from:)`...) are
not reported. Exits 1 when any symbol is reported.
    undocumented-symbols.py <symbol-graph-file>...
"""
import json
import sys
from urllib.parse import unquote, urlparse


def undocumented(path):
    with open(path) as handle:
        graph = json.load(handle)
    for symbol in graph.get("symbols", []):
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        location = unquote(urlparse(symbol.get("location", {}).get("uri", "")).path)
        if "/Sources/" not in location or "/.build/" in location:
            continue
        if symbol.get("docComment", {}).get("lines"):
            continue
        if "sourceOrigin" in symbol:   # documented where the requirement is declared
            continue
        if symbol.get("kind", {}).get("identifier") in ("swift.extension",):
            continue
        name = ".".join(symbol.get("pathComponents", [])) or symbol.get("names", {}).get("title", "?")
        line = symbol.get("location", {}).get("position", {}).get("line", 0) + 1
        yield "%s:%d: %s (%s)" % (location.split("/Sources/", 1)[1], line, name, symbol["kind"]["identifier"])


def main(paths):
    found = sorted(set(entry for path in paths for entry in undocumented(path)))
    for entry in found:
        print("Sources/" + entry)
    if found:
        print("error: %d public symbol(s) without a documentation comment" % len(found), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
