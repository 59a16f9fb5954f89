"""A table-protocol client in plain Python: python ten_line_client.py URL CODE TOKEN"""

import json
import sys

from websockets.sync.client import connect  # pip install websockets

url, table, token = sys.argv[1:4]  # e.g. ws://127.0.0.1:8000/ws K7QF2M <the seat's token>
with connect(url) as ws:
    ws.send(json.dumps({"type": "hello", "v": 1, "token": token, "table": table}))
    for frame in map(json.loads, ws):
        if frame["type"] == "prompt":  # answer with its seq; here, the first legal action
            ws.send(json.dumps({"type": "act", "seq": frame["seq"], "action": frame["legal"][0]}))
        elif frame["type"] == "match_end":
            print(frame["standings"])
            break
