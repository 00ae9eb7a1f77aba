"""A real Agent Framework agent (agent-framework-core, pinned) on a scripted fake chat client:
the client is composed the framework's way (function invocation outside chat middleware, so
chat middleware and the compaction strategy run at every model call of the tool loop) and
answers from a seeded script of parallel tool calls, then a final answer. No network."""

import random

from agent_framework import Agent, BaseChatClient, ChatResponse, Content, Message, tool
from agent_framework._middleware import ChatMiddlewareLayer
from agent_framework._tools import FunctionInvocationLayer

INSTRUCTIONS = "You are a research agent. Use the tools, then answer briefly."


class ScriptedClient(FunctionInvocationLayer, ChatMiddlewareLayer, BaseChatClient):
    """Answers ``rounds`` rounds of 1-3 parallel tool calls (seeded), then a final answer."""

    def __init__(self, rounds=6, seed=1, **kwargs):
        super().__init__(**kwargs)
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.calls = 0

    async def _inner_get_response(self, *, messages, stream, options, **kwargs):
        self.calls += 1
        r = self.calls
        if r > self.rounds:
            return ChatResponse(messages=[Message("assistant", ["Here is what I found."])])
        calls = []
        for k in range(self.rng.randint(1, 3)):
            name = self.rng.choice(["search", "fetch"])
            arg = {"search": "query", "fetch": "url"}[name]
            calls.append(Content.from_function_call(call_id=f"call_{r}_{k}", name=name,
                                                    arguments={arg: f"topic {r}.{k} ✓"}))
        return ChatResponse(messages=[Message("assistant", calls)])


@tool
def search(query: str) -> str:
    """Searches the web for ``query``."""
    return f"Results for {query}: " + "über café lorem ipsum dolor sit amet. " * 40


@tool
def fetch(url: str) -> str:
    """Fetches the page at ``url``."""
    return f"Page {url}: " + "the quick brown fox jumps over the lazy dog. " * 60


def agent(middleware, rounds=6, seed=1, compaction_strategy=None):
    client = ScriptedClient(rounds=rounds, seed=seed, middleware=middleware)
    return Agent(client=client, instructions=INSTRUCTIONS, tools=[search, fetch],
                 compaction_strategy=compaction_strategy)


QUESTION = "Find out about the topics, please."
