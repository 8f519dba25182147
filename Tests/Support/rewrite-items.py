#!/usr/bin/python3
"""Rewrites account items in place, as a refresh by another tokenctl process does
(bench.py row 13): every INTERVAL seconds for SPAN seconds, the next account of GROUP
(TYPE:id-NNNN, NNNN over COUNT accounts, stepping by 37) gets a new secret and new
`updated`/`expires` attributes on the same item, through the Secret Service (Debian's
python3-secretstorage). Prints how many items it rewrote.

    rewrite-items.py GROUP TYPE COUNT INTERVAL SPAN
"""
import json
import sys
import time

import secretstorage

group, kind, count, interval, span = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
stop = time.monotonic() + span
written = 0
while time.monotonic() < stop:
    i = (written * 37) % count
    items = list(collection.search_items(
        {"xdg:schema": "org.tokenctl.Account", "type": kind, "account": f"id-{i:04}", "group": group}))
    if len(items) != 1:
        sys.exit(f"rewrite-items.py: {len(items)} items for id-{i:04}")
    item = items[0]
    now = int(time.time())
    secret = {"version": 1, "access_token": f"a{i}", "refresh_token": f"r{i}-{written}", "token_type": "Bearer",
              "expires_at": now + 3600, "issued_at": now}
    # The secret first, then the attributes, as tokenctl's own write does.
    item.set_secret(json.dumps(secret).encode(), "text/plain")
    attributes = item.get_attributes()
    attributes.update({"updated": str(now), "expires": str(now + 3600)})
    item.set_attributes(attributes)
    written += 1
    time.sleep(interval)
print(written)
