#!/usr/bin/env python3
"""tests/e2e-fake-peer.py PORTFILE KIND - one connection on 127.0.0.1,
answered with text carrying a terminal escape sequence, then exit.

KIND http: an HTTP reply "500 Oops <ESC>[31mred" (push's reason phrase).
KIND ember: ember serve's hello answer "ERR <ESC>[31mdenied".
Writes its port to PORTFILE; gives up after 20 s.
"""
import socket
import sys

REPLIES = {
    'http': b'HTTP/1.1 500 Oops \x1b[31mred\r\nContent-Length: 4\r\n'
            b'Connection: close\r\n\r\n\x1b[2Jx',
    'ember': b'ERR \x1b[31mdenied\x1b[0m\n',
}


def main():
    port_file, kind = sys.argv[1], sys.argv[2]
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(1)
    srv.settimeout(20)
    with open(port_file + '.tmp', 'w') as f:
        f.write(str(srv.getsockname()[1]))
    import os
    os.rename(port_file + '.tmp', port_file)
    conn, _ = srv.accept()
    conn.settimeout(5)
    try:
        conn.recv(65536)        # the request or the hello
    except socket.timeout:
        pass
    conn.sendall(REPLIES[kind])
    conn.close()


if __name__ == '__main__':
    main()
