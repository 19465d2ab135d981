"""The outage scenarios of the fault suite, as plain functions: `tests/faults/` runs each once,
`bench/faults.py` many times. Each asserts the invariants (`check_outage_invariants`) and returns
its figures: commands sent, answered, left unanswered by the outage, and downloads."""

from __future__ import annotations

import asyncio
import base64
import random
import sys

from jellybit.client import JellybitClient, NoAnswer
from jellybit.protocol import Command
from tests.support.fault_stack import FaultStack, Ledger, check_outage_invariants, until
from tests.support.qbittorrent import QbittorrentInstance, magnet, seeded_torrent


async def connect(stack: FaultStack, within: float = 30.0) -> JellybitClient:
    """A client, once the broker takes connections again."""
    async def attempt() -> JellybitClient | None:
        client = JellybitClient(stack.mqtt, name="faults")
        try:
            return await client.__aenter__()
        except NoAnswer:
            return None

    return await until(attempt, within=within, what="a broker connection")


async def add_some(ledger: Ledger, client: JellybitClient, qbittorrent: QbittorrentInstance,
                   prefix: str) -> tuple[list[str], str]:
    """Three magnets that stay downloading, and one complete torrent that goes to review."""
    magnets = []
    for n in range(3):
        response = await ledger.send(client, Command.ADD, {"source": magnet(name=f"{prefix}.{n}")},
                                     f"{prefix}-{n}")
        assert response is not None
        assert response.status == "ok", response.error
        magnets.append(response.data.id)
    seeded = seeded_torrent(qbittorrent.data_dir, f"{prefix}.Complete", {"a.mkv": 30_000})
    response = await ledger.send(client, Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()},
                                 f"{prefix}-seeded")
    assert response is not None
    assert response.status == "ok", response.error
    return magnets, response.data.id


async def settled(stack: FaultStack, magnets: list[str], complete: str) -> None:
    def ready() -> bool:
        states = stack.states()
        return states.get(complete) == "review" and all(states.get(m) == "downloading" for m in magnets)

    await until(ready, within=60, what="the downloads to settle")


async def qbittorrent_outage(stack: FaultStack, qbittorrent: QbittorrentInstance) -> dict[str, int]:
    """qBittorrent stops with downloads in flight; a cancel refused meanwhile runs when sent again."""
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "QbtOut")
        await settled(stack, magnets, complete)

        qbittorrent.process.stop()
        cancel = {"id": magnets[0], "delete_data": True, "confirm": True}
        refused = await ledger.send(client, Command.CANCEL, cancel, "cancel-during-outage")
        assert refused is not None
        assert refused.error is not None
        assert refused.error.code == "adapter_error"              # not done, and not remembered
        during = await ledger.send(client, Command.ADD, {"source": magnet(name="Added.During")}, "add-during")
        assert during is not None
        assert during.status == "ok"                               # accepted, queued until it is back
        await asyncio.sleep(3.0)                                    # 15 polls: 5x the miss threshold
        assert "failed" not in stack.states().values()

        qbittorrent.process.start()

        async def resent() -> object:
            # Sent again (same transaction) until qBittorrent answers the worker: each attempt before
            # that is refused again, none is remembered, and the first that can run does.
            answer = await client.request(Command.CANCEL, {**cancel, "transaction": "cancel-during-outage"})
            return answer if answer.status == "ok" else None

        again = await until(resent, within=60, what="the cancel to run once qBittorrent is back")
        assert again.data.state == "cancelled"
        await until(lambda: stack.states()[during.data.id] == "downloading", what="the queued add")
    finally:
        await client.__aexit__(None, None, None)
    with qbittorrent.process.admin() as admin:
        tags = {t["tags"] for t in admin.get("torrents/info").json()}
    assert not any(magnets[0] in tag for tag in tags)                 # the cancel removed its torrent
    check_outage_invariants(stack, ledger, qbittorrent)
    return ledger.figures()


async def broker_outages(stack: FaultStack, qbittorrent: QbittorrentInstance, rng: random.Random,
                         cycles: int = 3) -> dict[str, int]:
    """The broker is killed mid-command `cycles` times; every command is sent again until answered."""
    ledger = Ledger()
    for cycle in range(cycles):
        client = await connect(stack)
        killer = asyncio.get_running_loop().call_later(rng.uniform(0.05, 0.6), stack.broker.kill)
        try:
            # Commands keep coming until the outage has cut at least one of them off.
            for n in range(200):
                answered = await ledger.send(client, Command.ADD, {"source": magnet(name=f"Bus.{cycle}.{n}")},
                                             f"bus-{cycle}-{n}", within=2.0)
                if answered is None:
                    break
        finally:
            killer.cancel()
            stack.broker.kill()
            await client.__aexit__(None, None, None)
        stack.broker.start()
        await stack.online()
    # A client that got no answer sends again with the same transaction: each runs exactly once.
    client = await connect(stack)
    try:
        for transaction, (command, body) in list(ledger.sent.items()):
            answer = await client.request(command, body)
            assert answer.status == "ok", answer.error
            first = ledger.acknowledged.get(transaction)
            if first is not None:
                assert answer.data.id == first.data.id
            ledger.acknowledged.setdefault(transaction, answer)
    finally:
        await client.__aexit__(None, None, None)
    assert len(stack.states()) == len(ledger.sent)
    check_outage_invariants(stack, ledger, qbittorrent)
    return ledger.figures()


async def both_outages(stack: FaultStack, qbittorrent: QbittorrentInstance) -> dict[str, int]:
    """The broker and qBittorrent down at once, then both back."""
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "Both")
        await settled(stack, magnets, complete)
    finally:
        await client.__aexit__(None, None, None)
    stack.broker.kill()
    qbittorrent.process.stop()
    await asyncio.sleep(3.0)
    assert stack.worker.alive
    qbittorrent.process.start()
    stack.broker.start()
    await stack.online()
    await settled(stack, magnets, complete)
    client = await connect(stack)
    try:
        late = await ledger.send(client, Command.ADD, {"source": magnet(name="Both.After")}, "both-after")
        assert late is not None
        assert late.status == "ok"
        await until(lambda: stack.states()[late.data.id] == "downloading",
                    what="an add after both outages")
    finally:
        await client.__aexit__(None, None, None)
    check_outage_invariants(stack, ledger, qbittorrent)
    return ledger.figures()


# Holds the database exclusively until its stdin closes (the test saw what it waited for), or at
# most argv[2] seconds.
LOCKER = """
import select, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
select.select([sys.stdin], [], [], float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


async def release(locker: asyncio.subprocess.Process) -> None:
    """Let the LOCKER go (close its stdin) and wait for it to end."""
    if locker.stdin is not None:
        locker.stdin.close()
    await asyncio.wait_for(locker.wait(), 30)


async def database_held(stack: FaultStack, qbittorrent: QbittorrentInstance) -> dict[str, int]:
    """Another process holds the database past two writes' busy timeouts."""
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "Locked")
        await settled(stack, magnets, complete)
        # Held for longer than two writes wait for it (the store's busy timeout is 5 s each).
        locker = await asyncio.create_subprocess_exec(sys.executable, "-c", LOCKER, str(stack.database), "30",
                                                      stdin=asyncio.subprocess.PIPE,
                                                      stdout=asyncio.subprocess.PIPE)
        try:
            assert locker.stdout is not None
            assert await locker.stdout.readline() == b"locked\n"
            refused = await ledger.send(client, Command.ADD, {"source": magnet(name="While.Locked")},
                                        "add-while-locked", within=30)
            rejected = await ledger.send(client, Command.REJECT, {"id": complete}, "reject-while-locked",
                                         within=30)
        finally:
            await release(locker)
        for response in (refused, rejected):
            assert response is not None
            assert response.error is not None
            assert response.error.code == "storage_locked", response.error
            assert "locked by another process" in response.error.message
        # Nothing was remembered: sent again, both run now.
        added = await client.request(Command.ADD, ledger.sent["add-while-locked"][1])
        assert added.status == "ok", added.error
        assert added.data.id in stack.states()
        again = await client.request(Command.REJECT, ledger.sent["reject-while-locked"][1])
        assert again.status == "ok", again.error
        assert again.data.state == "cancelled"
    finally:
        await client.__aexit__(None, None, None)
    assert stack.worker.alive
    check_outage_invariants(stack, ledger, qbittorrent)
    return ledger.figures()
