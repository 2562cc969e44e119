#!/usr/bin/env python3
"""Slow clients against a lumen server on loopback (bounded, local only).

Opens N connections that send a request line and then one header line
every second without ever finishing the headers, while a well-behaved
client asks for /api/health. Prints one line of findings and exits 0 when
the server kept answering the well-behaved client and closed the slow
connections within the header deadline; 1 otherwise.
Usage: slow_clients.py PORT N DEADLINE_S
"""
import socket
import sys
import time

port, n, deadline = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
slow = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    s.setblocking(False)
    slow.append(s)


def good_request():
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=3)
        c.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
        c.close()
        return data.startswith(b"HTTP/1.1 200")
    except OSError:
        return False


start = time.time()
answered = 0
asked = 0
closed_at = {}
while time.time() - start < deadline + 4:
    asked += 1
    answered += good_request()
    for i, s in enumerate(slow):
        if i in closed_at:
            continue
        try:
            s.send(b"X-Slow: 1\r\n")
            if s.recv(1) == b"":
                closed_at[i] = time.time() - start
        except BlockingIOError:
            pass
        except OSError:
            closed_at[i] = time.time() - start
    time.sleep(1)
latest = max(closed_at.values()) if closed_at else None
print(f"good client answered {answered}/{asked}; slow connections closed {len(closed_at)}/{n}"
      + (f", the last after {latest:.1f} s" if latest is not None else ""))
ok = answered == asked and len(closed_at) == n and latest <= deadline + 2.5
sys.exit(0 if ok else 1)
