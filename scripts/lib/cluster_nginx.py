#!/usr/bin/env python3
"""deploy/nginx/quire-cluster.conf for a local cluster (scripts/local/cluster): its upstreams and maps, up to its server
blocks, for the members given as TAG=ADDRESS (q1=127.0.0.1:41234 …), in place of the shipped q1 q2 q3 on
10.0.0.11-13:8080:

- in every upstream made of the instances (quire_lists, hashed by list; quire, least busy): one server line per
  member, with its address (the consistent hash places each instance by that address);
- one upstream quire_<tag> per member, made like the shipped quire_q1: the member, then the others as backups;
- one line `<tag> quire_<tag>;` per member in the $quire_upstream map.

Everything else is copied as shipped (comments, keepalive, maps, hash key).

Usage: scripts/lib/cluster_nginx.py TEMPLATE TAG=ADDRESS ...   (writes the configuration on stdout)
"""
import re
import sys

SERVER = re.compile(r"^( *)server 10\.0\.0\.1\d:8080( backup)?;[^\n]*\n", re.M)
UPSTREAM = re.compile(r"^upstream (\w+) \{\n.*?^\}\n", re.M | re.S)
TAGGED = re.compile(r"quire_q\d+")


def with_servers(block, lines):
    """`block` with its shipped server lines replaced by `lines`, where the first of them stood."""
    first = SERVER.search(block)
    indent = first.group(1)
    made = "".join(f"{indent}{line}\n" for line in lines)
    return block[:first.start()] + made + SERVER.sub("", block[first.start():])


def generate(template, members):
    text = template[:template.index("\nserver {") + 1]
    blocks = list(UPSTREAM.finditer(text))
    tagged = next(b.group(0) for b in blocks if b.group(1) == "quire_q1")
    out, at = [], 0
    for block in blocks:
        out.append(text[at:block.start()])
        at = block.end()
        name, body = block.group(1), block.group(0)
        if TAGGED.fullmatch(name):
            if name == "quire_q1":  # the members' upstreams, in place of the shipped ones
                made = []
                for tag, address in members:
                    lines = [f"server {address};"] + [f"server {a} backup;" for t, a in members if t != tag]
                    made.append(with_servers(tagged.replace("upstream quire_q1 ", f"upstream quire_{tag} ", 1), lines))
                out.append("\n".join(made))
            else:
                # The blank line after a shipped tagged upstream goes with it.
                if text[at:at + 1] == "\n":
                    at += 1
            continue
        if SERVER.search(body):
            body = with_servers(body, [f"server {address};" for _, address in members])
        out.append(body)
    out.append(text[at:])
    text = "".join(out)
    mapped = "".join(f"    {tag:<7} quire_{tag};\n" for tag, _ in members)
    return re.sub(r"(map \$quire_instance \$quire_upstream \{\n)(?: +q\d+ +quire_q\d+;\n)+",
                  lambda m: m.group(1) + mapped, text)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    members = [argument.split("=", 1) for argument in sys.argv[2:]]
    sys.stdout.write(generate(open(sys.argv[1]).read(), members))


if __name__ == "__main__":
    main()
