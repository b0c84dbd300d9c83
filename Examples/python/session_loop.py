"""A session loop through the client that openapi-python-client generates from openapi.yaml.

Run by scripts/test/client-test against a live `quire serve`: writes a list, applies every kind of operation,
follows sessions in both change formats (changes after writes, extend, expand, collapse, reset), reads
a 409 and a 404 as typed problems, and follows a filtered session whose filter is built from the generated
models (and reads filtered pages, and invalid filters as typed 400s). Every answer must be parsed into the model the document names for
its status, and that model's `to_dict()` must equal the JSON the server sent: nothing dropped, nothing
added.

    python session_loop.py BASE_URL TOKEN      (the generated package `quire_client` on sys.path)
"""

import json
import sys

from quire_client import AuthenticatedClient
from quire_client.api.lists import apply_list_ops, get_list_page, list_lists, put_list
from quire_client.api.sessions import (
    collapse_session_item,
    create_session,
    delete_session,
    expand_session_item,
    get_session_changes,
    reset_session,
)
from quire_client.models import (
    BatchChangesAnswer,
    ExpandRequest,
    FilterAll,
    FilterAny,
    FilterContainsTerm,
    FilterEqTerm,
    FilterGteTerm,
    FilterInTerm,
    FilterNot,
    GetSessionChangesExtend,
    ListDocument,
    ListIndex,
    OpsRequest,
    Page,
    Problem,
    ResetAnswer,
    ResetRequest,
    SequentialChangesAnswer,
    SessionCreateRequest,
    SessionPage,
    SinceMismatchProblem,
    WriteResult,
)

LIST = "gen-python"
checked = 0


def typed(response, model, status):
    """The parsed answer: of `model`, for `status`, and equal to the server's JSON as a dict."""
    global checked
    body = json.loads(response.content)
    assert response.status_code == status, f"status {response.status_code}, wanted {status}: {body}"
    parsed = response.parsed
    assert isinstance(parsed, model), f"parsed as {type(parsed).__name__}, wanted {model.__name__}: {body}"
    again = parsed.to_dict()
    assert again == body, f"{model.__name__}.to_dict() differs from the server's JSON:\n{again}\n{body}"
    checked += 1
    return parsed


def view(kind, data):
    return {"type": kind, "data": data}


def readme(base):
    """The example of docs/app-developers.md ("Generated clients"): a page of the demo list."""
    client = AuthenticatedClient(base_url=base, token="read-token")
    page = get_list_page.sync(list_="demo", client=client, limit=20)
    assert isinstance(page, Page), page  # a Problem otherwise
    for section in page.sections:
        print(section.id, section.header.type_ if section.header else "no header", [i.id for i in section.items])
    print("next page:", page.page.next_)


def filtered(client):
    """A filtered session (openapi.yaml) whose filter is made of the generated models, never a dict by hand: its
    window, its changes when items are written into and out of the filter, filtered pages through their cursors,
    and `400 invalid-filter` as a typed problem."""
    filtered_list = "gen-python-filtered"
    senders = ["Ada", "bot", "Grace", "system"]

    def message(n, sender, unread):
        return {"id": f"f-{n}", "type": "message",
                "data": {"from": sender, "text": f"Message {n} from {sender}", "unread": unread, "n": n}}

    document = {"sections": [
        {"id": "inbox", "header": view("day-header", {"title": "Inbox"}),
         "items": [message(n, senders[n % 4], n % 3 != 0) for n in range(12)]},
        {"id": "bots", "items": [message(n, "bot", True) for n in range(12, 15)]},
        {"id": "old", "items": [message(n, senders[n % 4], n % 2 == 0) for n in range(15, 20)]
         + [{"id": "t-1", "type": "thread", "data": {"title": "Trip"}}]},
    ]}
    typed(put_list.sync_detailed(filtered_list, client=client, body=ListDocument.from_dict(document)), WriteResult, 201)

    # Unread messages, not from a bot, that mention Ada (any case) or are old (n >= 15).
    unread = FilterAll(all_=[
        FilterEqTerm(field="type", eq="message"),
        FilterEqTerm(field="data.unread", eq=True),
        FilterNot(not_=FilterInTerm(field="data.from", in_=["bot", "system"])),
        FilterAny(any_=[FilterContainsTerm(field="data.text", contains="ADA"), FilterGteTerm(field="data.n", gte=15)]),
    ])
    as_json = unread.to_dict()
    assert as_json["all"][2] == {"not": {"field": "data.from", "in": ["bot", "system"]}}, as_json
    # The generated parser tells the cases apart by their members: the filter parses back to the same models.
    again = FilterAll.from_dict(as_json)
    assert [type(part).__name__ for part in again.all_] == ["FilterEqTerm", "FilterEqTerm", "FilterNot", "FilterAny"]
    assert again.to_dict() == as_json

    def ids(sections):
        return [f"{section.id}: {' '.join(item.id for item in section.items)}" for section in sections]

    session = typed(create_session.sync_detailed(filtered_list, client=client, body=SessionCreateRequest(
        limit=3, filter_=unread)), SessionPage, 201)
    # The bots section has no match: it is left out.
    assert ids(session.sections) == ["inbox: f-4 f-8", "old: f-16"], ids(session.sections)
    assert session.page.total == 4 and session.page.has_next, session.page

    # f-8 read (out of the filter), f-0 unread (into it), an unread message of Ada's among the bots' (the section's
    # first match: a section insert).
    typed(apply_list_ops.sync_detailed(filtered_list, client=client, body=OpsRequest.from_dict({"ops": [
        {"op": "updateItems", "items": [message(8, "Ada", False)]},
        {"op": "updateItems", "items": [message(0, "Ada", True)]},
        {"op": "insertItems", "section": "bots", "items": [message(30, "Ada", True)]},
    ]})), WriteResult, 200)
    response = get_session_changes.sync_detailed(session.session, client=client, seq=session.seq)
    changes = typed(response, type(response.parsed), 200)
    assert isinstance(changes, (BatchChangesAnswer, ResetAnswer)), changes
    assert changes.page.total == 5, changes.page
    # A reset of a filtered session is a page of the filtered list, named by the list's name.
    reset = typed(reset_session.sync_detailed(session.session, client=client, body=ResetRequest(limit=3)),
                  ResetAnswer, 200)
    assert reset.reset.list_ == filtered_list, f"a filtered session's reset names the list {reset.reset.list_!r}"
    assert ids(reset.reset.sections) == ["inbox: f-0 f-4", "bots: f-30"] and reset.page.total == 5, \
        (ids(reset.reset.sections), reset.page)

    # Filtered pages: the filter as JSON text (the models' dict, encoded), paged by their cursors.
    text = json.dumps(unread.to_dict(), separators=(",", ":"))
    first = typed(get_list_page.sync_detailed(filtered_list, client=client, limit=2, filter_=text), Page, 200)
    assert ids(first.sections) == ["inbox: f-0 f-4"] and first.page.total == 5, (ids(first.sections), first.page)
    second = typed(get_list_page.sync_detailed(filtered_list, client=client, limit=2, after=first.page.next_,
                                               filter_=text), Page, 200)
    assert ids(second.sections) == ["bots: f-30", "old: f-16"], ids(second.sections)

    # Filters the server refuses, as typed problems: two operators in a term (as text), an empty all.
    problems = [
        typed(get_list_page.sync_detailed(filtered_list, client=client,
                                          filter_='{"field":"data.from","eq":"Ada","ne":"Bob"}'), Problem, 400),
        typed(create_session.sync_detailed(filtered_list, client=client, body=SessionCreateRequest(
            filter_=FilterAll(all_=[]))), Problem, 400),
    ]
    assert all(problem.type_ == "https://quire.dev/problems/invalid-filter" for problem in problems), problems
    assert delete_session.sync_detailed(session.session, client=client).status_code == 204
    print("python client: a filtered session and filtered pages, the filter made of the generated models")


def main() -> int:
    base, token = sys.argv[1], sys.argv[2]
    readme(base)
    client = AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True)

    document = {
        "sections": [
            {"id": "today", "header": view("day-header", {"title": "Today"}), "footer": view("day-footer", {"n": 4}),
             "items": [
                 {"id": "m-1", "type": "message", "data": {"from": "Ada", "text": "Hi"}},
                 {"id": "t-9", "type": "thread", "data": {"title": "Trip"},
                  "children": [{"id": "m-7", "type": "message", "data": {"text": "Tickets?"}}]},
                 {"id": "m-2", "type": "message", "data": None},
                 {"id": "m-3", "type": "message", "data": [1, 2.5, True, "x"]},
             ]},
            {"id": "yesterday", "header": view("day-header", {"title": "Yesterday"}), "footer": None,
             "items": [{"id": "m-4", "type": "message"}, {"id": "m-5", "type": "message", "data": 5}]},
            {"id": "older", "items": [{"id": "m-6", "type": "message", "data": "old"}]},
        ]
    }
    body = ListDocument.from_dict(document)
    assert body.to_dict()["sections"][0]["header"] == document["sections"][0]["header"]
    written = typed(put_list.sync_detailed(LIST, client=client, body=body), WriteResult, 201)
    version = written.version

    page = typed(get_list_page.sync_detailed(LIST, client=client, limit=3), Page, 200)
    assert page.page.next_ is not None and page.sections[0].header.type_ == "day-header"
    typed(get_list_page.sync_detailed(LIST, client=client, limit=3, after=page.page.next_), Page, 200)
    typed(list_lists.sync_detailed(client=client), ListIndex, 200)

    batch = typed(create_session.sync_detailed(LIST, client=client, body=SessionCreateRequest.from_dict(
        {"limit": 4, "format": "batch"})), SessionPage, 201)
    sequential = typed(create_session.sync_detailed(LIST, client=client, body=SessionCreateRequest.from_dict(
        {"limit": 6, "format": "sequential", "expanded": ["t-9"]})), SessionPage, 201)

    ops = OpsRequest.from_dict({"ops": [
        {"op": "insertItems", "section": "today", "after": "m-1", "items": [{"id": "m-10", "type": "message", "data": {"text": "new"}}]},
        {"op": "insertItems", "parent": "t-9", "before": "m-7", "items": [{"id": "m-11", "type": "message"}]},
        {"op": "removeItems", "ids": ["m-3"]},
        {"op": "updateItems", "items": [{"id": "m-2", "type": "message", "data": {"text": "edited"}}]},
        {"op": "moveItem", "id": "m-5", "section": "today", "after": "m-10"},
        {"op": "insertSections", "before": "today", "sections": [
            {"id": "later", "header": view("day-header", {"title": "Later"}), "items": [{"id": "m-20", "type": "message"}]}]},
        {"op": "removeSections", "ids": ["older"]},
        {"op": "updateSection", "id": "yesterday", "header": view("day-header", {"title": "Yday"}), "footer": view("day-footer", None)},
        {"op": "moveSection", "id": "later", "after": "yesterday"},
    ]})
    assert [op["op"] for op in ops.to_dict()["ops"]] == [
        "insertItems", "insertItems", "removeItems", "updateItems", "moveItem", "insertSections", "removeSections",
        "updateSection", "moveSection"]
    written = typed(apply_list_ops.sync_detailed(LIST, client=client, body=ops), WriteResult, 200)
    assert written.version == version + 1

    seen = set()

    def answer(response, session):
        parsed = response.parsed
        model = type(parsed)
        assert model in (BatchChangesAnswer, SequentialChangesAnswer, ResetAnswer), model
        typed(response, model, 200)
        seen.add(model.__name__)
        session["since"], session["seq"] = parsed.version, parsed.seq
        return parsed

    b = {"id": batch.session, "since": batch.version, "seq": batch.seq}
    s = {"id": sequential.session, "since": sequential.version, "seq": sequential.seq}
    answer(get_session_changes.sync_detailed(b["id"], client=client, since=b["since"]), b)
    answer(get_session_changes.sync_detailed(s["id"], client=client, seq=s["seq"]), s)
    answer(get_session_changes.sync_detailed(b["id"], client=client, seq=b["seq"], extend=GetSessionChangesExtend.NEXT, limit=3), b)
    answer(expand_session_item.sync_detailed(b["id"], client=client, body=ExpandRequest.from_dict(
        {"seq": b["seq"], "id": "t-9"})), b)
    answer(collapse_session_item.sync_detailed(s["id"], client=client, body=ExpandRequest.from_dict(
        {"since": s["since"], "id": "t-9"})), s)
    reset = typed(reset_session.sync_detailed(s["id"], client=client, body=ResetRequest.from_dict({"limit": 5})),
                  ResetAnswer, 200)
    s["since"], s["seq"] = reset.version, reset.seq
    # A whole new content: more changes than the window is worth, answered as a reset by `changes`.
    typed(put_list.sync_detailed(LIST, client=client, body=ListDocument.from_dict({"sections": [
        {"id": f"n-{k}", "items": [{"id": f"x-{k}-{i}", "type": "row"} for i in range(3)]} for k in range(4)]})),
        WriteResult, 200)
    answer(get_session_changes.sync_detailed(s["id"], client=client, since=s["since"]), s)
    answer(get_session_changes.sync_detailed(b["id"], client=client, since=b["since"]), b)
    assert {"BatchChangesAnswer", "SequentialChangesAnswer"} <= seen, seen

    conflict = typed(get_session_changes.sync_detailed(b["id"], client=client, since=b["since"] + 100),
                     SinceMismatchProblem, 409)
    assert conflict.status == 409 and conflict.version == b["since"] and conflict.seq == b["seq"], conflict
    assert delete_session.sync_detailed(b["id"], client=client).status_code == 204
    gone = typed(get_session_changes.sync_detailed(b["id"], client=client, since=b["since"]), Problem, 404)
    assert gone.type_ == "https://quire.dev/problems/session-not-found", gone

    filtered(client)
    print(f"python client: {checked} answers parsed and equal to the server's JSON "
          f"({', '.join(sorted(seen))} among the changes answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
