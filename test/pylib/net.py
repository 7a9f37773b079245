"""Network helpers shared by the Python tests (test/integration, test/image, test/browser)."""
import socket


def free_port(kind=socket.SOCK_STREAM):
    """A port that is free on 127.0.0.1 now: TCP by default, UDP with socket.SOCK_DGRAM."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
