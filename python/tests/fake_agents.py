"""A real LangChain agent (``langchain.agents.create_agent``) on a seeded fake chat model: the
agent the tests, docs/CI.md and the runtime peers (peers/runtime.py) run.

The model is LangChain's own ``GenericFakeChatModel`` with a ``bind_tools`` that returns
itself (the fake has no tool binding of its own): it answers with a scripted sequence of
assistant messages, each round issuing 1 to 3 parallel tool calls, then a final answer. The
tools return large results (so compaction has something to do). No network.
"""

import itertools
import random

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

SYSTEM_PROMPT = "You are a research agent. Use the tools, then answer briefly."


class FakeChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` whose ``bind_tools`` returns itself."""

    def bind_tools(self, tools, **kwargs):
        return self


def script(rounds, seed=1):
    """``rounds`` assistant messages with parallel tool calls (seeded), then an answer."""
    rng = random.Random(seed)
    for r in range(rounds):
        calls = []
        for k in range(rng.randint(1, 3)):
            name = rng.choice(["search", "fetch"])
            arg = {"search": "query", "fetch": "url"}[name]
            calls.append({"name": name, "args": {arg: f"topic {r}.{k} ✓"}, "id": f"call_{r}_{k}"})
        yield AIMessage(f"Round {r}: looking things up." if rng.random() < 0.3 else "",
                        tool_calls=calls)
    yield AIMessage("Here is what I found.")


@tool
def search(query: str) -> str:
    """Searches the web for ``query``."""
    return f"Results for {query}: " + "über café lorem ipsum dolor sit amet. " * 40


@tool
def fetch(url: str) -> str:
    """Fetches the page at ``url``."""
    return f"Page {url}: " + "the quick brown fox jumps over the lazy dog. " * 60


TOOLS = [search, fetch]


def summarizer_model():
    """A fake model for ``SummarizationMiddleware``: always the same summary."""
    return FakeChatModel(messages=itertools.repeat(AIMessage("Summary: the agent searched and fetched pages.")))


def agent(middleware, rounds=6, seed=1, **kwargs):
    """The agent with ``middleware`` on a fresh scripted model."""
    return create_agent(FakeChatModel(messages=script(rounds, seed)), tools=TOOLS,
                        system_prompt=SYSTEM_PROMPT, middleware=middleware, **kwargs)


def question():
    return {"messages": [("user", "Find out about the topics, please.")]}
