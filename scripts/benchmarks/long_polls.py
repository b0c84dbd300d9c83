"""`bench.py long-polls`: N concurrent long polls (20-item windows of the demo list), one write: the time until
every one is answered. The polls are parked and read by bench/fan-out-client.c (one epoll loop in C, from several
loopback source addresses), so that the client holds 100,000 of them on the same two cores as the server."""
from .common import connection_room, start_quire
from .fan_out import fan_out_run


def long_polls(options):
    sources = connection_room(options.count)
    process, base = start_quire({"QUIRE_LONG_POLL_MAX_WAITERS": str(options.count + 100),
                                 "QUIRE_SERVER_CONNECTION_LIMIT": str(options.count + 1000),
                                 "QUIRE_SESSIONS_CAPACITY": str(max(200_000, options.count + 1000))})
    port = int(base.rsplit(":", 1)[1])
    fan_out_run(port, base, options.count, 20, sources, list_name="demo", item=("m-1", "message"),
                label="long-polls")
