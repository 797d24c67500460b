"""Resources and prompts through the core: paging across plugins, templates, refusals."""

from __future__ import annotations

import anyio
import pytest

from gateway import Answer, Prompt, PromptArgument, Resource, ResourcePage, ResourceTemplate, ToolError
from gateway.engine.core import NotFound
from gateway.testing import inline_plugin, make_gateway
from gateway.wire.server import build_server

ITEMS = [f"item{i:03d}" for i in range(230)]


def listing(ctx, cursor, limit):
    start = int(cursor or 0)
    chunk = ITEMS[start:start + min(limit, 40)]
    following = start + len(chunk)
    return ResourcePage(
        resources=[{"uri": f"things://items/{name}", "name": name} for name in chunk],
        next_cursor=str(following) if following < len(ITEMS) else None,
    )


def read_item(ctx, name):
    if name == "item013":
        ctx.gate.check_read({"closed"}, f"things://items/{name}")
    if name not in ITEMS:
        raise ToolError(f"no item named {name}")
    return Answer(text=f"the text of {name}")


@pytest.fixture
def gateway(gateway_home):
    things = inline_plugin(
        "things",
        resources=[Resource(uri="things://summary", name="summary", read=lambda ctx: "a summary")],
        templates=[ResourceTemplate(uri_template="things://items/{name}", name="item", read=read_item,
                                    listing=listing)],
        prompts=[Prompt(name="review", render=lambda ctx, topic: f"Review {topic}",
                        arguments=[PromptArgument("topic", required=True)])],
    )
    other = inline_plugin(
        "other",
        templates=[ResourceTemplate(uri_template="other://notes/{id}", name="note", read=lambda ctx, id: id,
                                    listing=lambda ctx, cursor, limit: ResourcePage(
                                        resources=[{"uri": "other://notes/1", "name": "one"}]))],
    )
    return make_gateway([things, other], home=gateway_home, config={"gateway": {"plugins": ["things", "other"]}},
                        projects=[{"id": "closed", "name": "Closed one"}])


def test_resources_list_pages_through_every_plugin_in_order(gateway):
    pages, cursor, uris = 0, None, []
    while True:
        page, cursor = gateway.list_resources(cursor)
        pages += 1
        assert len(page) <= 100
        uris += [item["uri"] for item in page]
        if not cursor:
            break
    assert uris == ["things://summary", *[f"things://items/{n}" for n in ITEMS], "other://notes/1"]
    assert pages >= 3


def test_a_cursor_not_made_by_the_gateway_is_refused(gateway):
    with pytest.raises(ToolError, match="cursor"):
        gateway.list_resources("garbage!")


def test_a_template_reads_by_its_parameters_and_the_audit_names_it(gateway, audit_lines):
    assert gateway.read("things://items/item007").text == "the text of item007"
    assert gateway.read("things://summary").text == "a summary"
    assert audit_lines()[0]["given"] == ["things://items/item007"]


def test_a_kept_resource_is_refused_saying_how_to_open_it_naming_no_project(gateway):
    answer = gateway.read("things://items/item013")
    assert answer.is_error and "gateway access why" in answer.text and "ai = true" in answer.text
    assert "Closed one" not in answer.text


def test_an_unknown_resource_is_not_found(gateway):
    with pytest.raises(NotFound):
        gateway.read("nothing://here")


def test_a_prompt_checks_its_arguments(gateway):
    assert gateway.prompt("review", {"topic": "the plan"}).text == "Review the plan"
    with pytest.raises(ToolError, match="missing argument"):
        gateway.prompt("review", {})
    with pytest.raises(ToolError, match="unknown argument"):
        gateway.prompt("review", {"topic": "x", "tone": "y"})


def test_over_the_protocol_errors_are_jsonrpc_errors(gateway):
    from mcp import Client

    async def session():
        async with Client(build_server(gateway), mode="legacy") as client:
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["things://items/{name}", "other://notes/{id}"]
            with pytest.raises(Exception, match="closed to AI agents"):
                await client.read_resource("things://items/item013")
            with pytest.raises(Exception, match="Unknown resource"):
                await client.read_resource("nothing://here")
            with pytest.raises(Exception, match="missing argument"):
                await client.get_prompt("review", {})
            first = await client.list_resources()
            assert len(first.resources) == 100 and first.next_cursor

    anyio.run(session)
