"""A real OpenAI Agents SDK agent (``agents.Agent`` run by ``agents.Runner``) on the SDK's own
scripted model (``agents.testing.ScriptedModel``): the agent the tests, docs/CI.md and the
runtime peers (peers/runtime.py) run.

The model answers with a seeded script: each round 1 to 3 parallel ``function_call`` items,
then a final answer. The tools return large results (so compaction has something to do),
non-ASCII included. No network: the SDK's tracing is disabled in every run config.
"""

import random

from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

INSTRUCTIONS = "You are a research agent. Use the tools, then answer briefly."
QUESTION = "What changed in the field this year? Résumé, s'il vous plaît."
ANSWER = "Here is what I found."


def script(rounds, seed=1, answer=ANSWER):
    """``rounds`` model answers with parallel tool calls (seeded), then the final ``answer``."""
    rng = random.Random(seed)
    steps = []
    for r in range(rounds):
        calls = []
        for k in range(rng.randint(1, 3)):
            name = rng.choice(["search", "fetch"])
            arg = {"search": "query", "fetch": "url"}[name]
            calls.append(function_call(name, {arg: f"topic {r}.{k} ✓"}, call_id=f"call_{r}_{k}"))
        steps.append(calls)
    steps.append([assistant_message(answer)])
    return steps


@function_tool
def search(query: str) -> str:
    """Searches the web for ``query``."""
    return f"Results for {query}: " + "über café lorem ipsum dolor sit amet. " * 40


@function_tool
def fetch(url: str) -> str:
    """Fetches the page at ``url``."""
    return f"Page {url}: " + "日本語のテキスト and some English text. " * 60


def agent(rounds=6, seed=1):
    """The agent and its scripted model (``model.calls`` records what each call received)."""
    model = ScriptedModel(script(rounds, seed))
    return Agent(name="researcher", instructions=INSTRUCTIONS, model=model,
                 tools=[search, fetch]), model


def run(call_model_input_filter, rounds=6, seed=1):
    """Runs the agent to its answer with the filter; returns ``(result, model)``."""
    a, model = agent(rounds, seed)
    config = RunConfig(call_model_input_filter=call_model_input_filter, tracing_disabled=True)
    result = Runner.run_sync(a, QUESTION, run_config=config, max_turns=rounds + 2)
    return result, model


def answer(q):
    """The answer to the ``q``-th question of a conversation (each differs, as a model's do:
    observed records identify a message without an id by its content, TRN-5)."""
    return ANSWER if q == 0 else f"{ANSWER} ({q + 1})"


QUESTIONS = ["What changed in the field this year? Résumé, s'il vous plaît.",
             "And what does that mean for next year?", "Which sources disagree, and why? 为什么?"]


def conversation(call_model_input_filter, rounds=6, seed=1, questions=3):
    """A conversation of ``questions`` user turns (``rounds // questions`` tool rounds each, then
    an answer), each turn a ``Runner.run_sync`` on the items the last one ended with plus the
    next question (the SDK's multi-turn pattern, ``result.to_input_list()``); returns
    ``(results, model)``."""
    per = max(1, rounds // questions)
    steps = []
    for q in range(questions):
        steps += script(per, seed * 100 + q, answer(q))
    # The scripted call ids must differ across turns: prefix them with the turn.
    for q in range(questions):
        for step in steps[q * (per + 1):(q + 1) * (per + 1)]:
            for item in step:
                if getattr(item, "type", None) == "function_call":
                    item.call_id = item.id = f"t{q}_{item.call_id}"
    model = ScriptedModel(steps)
    a = Agent(name="researcher", instructions=INSTRUCTIONS, model=model, tools=[search, fetch])
    config = RunConfig(call_model_input_filter=call_model_input_filter, tracing_disabled=True)
    items, results = [], []
    for q in range(questions):
        items = items + [{"role": "user", "content": QUESTIONS[q % len(QUESTIONS)]}]
        result = Runner.run_sync(a, items, run_config=config, max_turns=per + 2)
        results.append(result)
        items = result.to_input_list()
    return results, model
