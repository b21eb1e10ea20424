#!/usr/bin/env python3
"""Validates generated outputs with the third-party `jsonschema` package (Debian
python3-jsonschema). Input: a JSON-lines file of {"schema": ..., "output": "<text>"}; prints one
line per failure and exits 1 if any output is not JSON or does not validate."""
import json
import sys

import jsonschema


def main(path):
    bad = 0
    total = 0
    for line in open(path, encoding="utf-8"):
        rec = json.loads(line)
        total += 1
        try:
            value = json.loads(rec["output"])
        except ValueError as e:
            print(f"{rec.get('name')}: output is not JSON ({e}): {rec['output'][:200]!r}")
            bad += 1
            continue
        cls = jsonschema.validators.validator_for(rec["schema"], default=jsonschema.Draft202012Validator)
        errors = list(cls(rec["schema"]).iter_errors(value))
        if errors:
            print(f"{rec.get('name')}: {errors[0].message[:200]} in {rec['output'][:200]!r}")
            bad += 1
    print(f"validated {total} outputs, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
