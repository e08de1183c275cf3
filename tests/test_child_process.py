import socket

from cartagent.child_process import _ephemeral_ports, free_port


def test_free_ports_are_bindable_distinct_and_outside_the_kernels_ephemeral_range() -> None:
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert not any(port in _ephemeral_ports() for port in ports)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", ports[0]))


def test_a_port_something_listens_on_is_never_handed_out() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", free_port()))
        busy.listen()
        taken = busy.getsockname()[1]
        assert taken not in {free_port() for _ in range(200)}
