#!/usr/bin/env python3
"""Parses Prometheus text exposition format from stdin with the reference
parser (prometheus_client) and prints every sample as one JSON object per
line: {"name", "labels", "value", "type"}. Exit 77 (and the reason on
stdout) when the module is missing, 1 when the text does not parse."""
import json
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as e:
    print("SKIP: python3 module prometheus_client missing (Debian: python3-prometheus-client): %s" % e)
    sys.exit(77)

text = sys.stdin.read()
try:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            print(json.dumps({"name": s.name, "labels": s.labels, "value": s.value,
                              "type": family.type}))
except Exception as e:  # the parser raises ValueError and others
    print("PARSE ERROR: %r" % e)
    sys.exit(1)
