#!/usr/bin/env python3
"""Runtime peers: real agent loops, every model call recorded and judged (SPEC TRC-13).

Where ``peers/run.py`` hands each reducer one conversation, this runs the agents themselves: a
LangChain ``create_agent`` loop, an Agent Framework agent, an OpenAI Agents SDK run, a
pydantic-ai agent (its ``FunctionModel`` replaying the LangChain fake's script) and a Google ADK
agent (a ``BaseLlm`` replaying it over several invocations), each on a seeded fake model
(``python/tests/fake_agents.py``, ``fake_af.py``, ``fake_openai_agents.py`` (the SDK's own
``ScriptedModel``): 1-3 parallel tool calls per round, large tool results, no network), with
each framework's own compaction as the thing under test, and with ours (``CompactionMiddleware``,
``CompactionFilter``, ``CompactionProcessor``, ``CompactionCallback``). ``TraceMiddleware`` /
``TraceFilter`` / ``Recorder`` / ``TraceCallback`` records every model call (the history the
agent held, what the model received) and ``hc.check`` judges the trace.

Usage (the current interpreter needs hybrid_compaction, langchain, agent-framework-core,
openai-agents, pydantic-ai-slim and google-adk at the pins of ``peers/requirements.txt``)::

    python3 peers/runtime.py            # 36 tool rounds (37 model calls) per configuration;
                                        # rewrites the runtime section of docs/PEERS.md
    python3 peers/runtime.py --smoke    # CI: 8 rounds at half the budget, every configuration,
                                        # no file written;
                                        # exit 1 unless CompactionMiddleware checks clean and
                                        # the harness judged every configuration
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import io
import pathlib
import platform
import sys
import time
from collections import Counter
from importlib import metadata
from typing import Any, Callable, Dict, List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))

BEGIN = "<!-- runtime peers: written by peers/runtime.py; do not edit by hand -->"
END = "<!-- end of runtime peers -->"

#: What every call is judged against: o200k tokens (the unit models bill in), the last two
#: recency units required (the question being answered and the tool round answering it).
HARD_LIMIT = 12_000
RETENTION = 2
#: Where each framework's compaction is told to act: three quarters of the hard limit.
TRIGGER = 9_000
SEED = 7
#: The user turns of the Agents SDK conversations (the tool rounds split among them).
QUESTIONS = 3


def policy() -> Dict[str, Any]:
    import hybrid_compaction as hc

    return hc.policy(hard_limit=HARD_LIMIT, trigger_margin=HARD_LIMIT - TRIGGER,
                     recent_message_retention_count=RETENTION, maximum_compaction_attempts=2,
                     preservation_label="runtime-peers", preservation_version=1,
                     estimator="tokens:o200k_base")


class O200k:
    """Agent Framework's tokenizer protocol with the oracle's o200k counter."""

    def count_tokens(self, text: str) -> int:
        import hybrid_compaction as hc

        return hc.count_tokens([text])[0]


def langchain_configs() -> List[Dict[str, Any]]:
    from hybrid_compaction.langchain import CompactionMiddleware
    from langchain.agents.middleware import (ClearToolUsesEdit, ContextEditingMiddleware,
                                             SummarizationMiddleware, before_model)
    from langchain_core.messages import RemoveMessage, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    import fake_agents

    def trim(**settings: Any) -> Any:
        @before_model
        def hook(state: Any, runtime: Any) -> Any:
            kept = trim_messages(state["messages"], max_tokens=TRIGGER,
                                 token_counter=count_tokens_approximately, **settings)
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
        return hook

    return [
        {"name": "none (no compaction)", "framework": "langchain", "middleware": lambda trace: [],
         "setting": "`create_agent(...)` without compaction middleware"},
        {"name": "LangChain `SummarizationMiddleware`", "framework": "langchain",
         "middleware": lambda trace: [SummarizationMiddleware(
             model=fake_agents.summarizer_model(), trigger=("tokens", TRIGGER), keep=("messages", 6))],
         "setting": f'`trigger=("tokens", {TRIGGER})`, `keep=("messages", 6)`, stub summarizer'},
        {"name": "LangChain `ContextEditingMiddleware(ClearToolUsesEdit)`", "framework": "langchain",
         "middleware": lambda trace: [ContextEditingMiddleware(
             edits=[ClearToolUsesEdit(trigger=TRIGGER, keep=2)])],
         "setting": f"`edits=[ClearToolUsesEdit(trigger={TRIGGER}, keep=2)]`"},
        {"name": "LangChain `trim_messages` hook (defaults)", "framework": "langchain",
         "middleware": lambda trace: [trim(strategy="last")],
         "setting": f'`before_model`: `trim_messages(max_tokens={TRIGGER}, strategy="last")`'},
        {"name": "LangChain `trim_messages` hook (documented settings)", "framework": "langchain",
         "middleware": lambda trace: [trim(strategy="last", start_on="human", include_system=True,
                                     end_on=("human", "tool"))],
         "setting": '`start_on="human", include_system=True, end_on=("human", "tool")`'},
        {"name": "ours: `CompactionMiddleware` (LangChain)", "framework": "langchain",
         "middleware": lambda trace: [CompactionMiddleware(policy(), trace=trace)], "ours": True,
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
    ]


def agent_framework_configs() -> List[Dict[str, Any]]:
    import agent_framework as af
    from hybrid_compaction.agent_framework import CompactionMiddleware

    return [
        {"name": "Agent Framework `TruncationStrategy`", "framework": "agent-framework",
         "strategy": lambda: af.TruncationStrategy(max_n=TRIGGER, compact_to=TRIGGER * 2 // 3,
                                                   tokenizer=O200k()),
         "setting": f"`max_n={TRIGGER}, compact_to={TRIGGER * 2 // 3}`, o200k tokenizer"},
        {"name": "Agent Framework `SlidingWindowStrategy`", "framework": "agent-framework",
         "strategy": lambda: af.SlidingWindowStrategy(keep_last_groups=4),
         "setting": "`keep_last_groups=4`"},
        {"name": "Agent Framework `TokenBudgetComposedStrategy` (+ `ToolResultCompactionStrategy`)",
         "framework": "agent-framework",
         "strategy": lambda: af.TokenBudgetComposedStrategy(
             token_budget=TRIGGER, tokenizer=O200k(),
             strategies=[af.ToolResultCompactionStrategy(keep_last_tool_call_groups=1)]),
         "setting": f"`token_budget={TRIGGER}`, tool results of older groups collapsed"},
        {"name": "Agent Framework `ContextWindowCompactionStrategy`", "framework": "agent-framework",
         "strategy": lambda: af.ContextWindowCompactionStrategy(
             max_context_window_tokens=HARD_LIMIT, max_output_tokens=HARD_LIMIT - TRIGGER,
             tokenizer=O200k()),
         "setting": f"`max_context_window_tokens={HARD_LIMIT}, max_output_tokens={HARD_LIMIT - TRIGGER}`"},
        {"name": "ours: `CompactionMiddleware` (Agent Framework)", "framework": "agent-framework",
         "strategy": lambda: None, "ours": True, "chat": lambda trace: [CompactionMiddleware(policy(), trace=trace)],
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
    ]


def openai_agents_configs() -> List[Dict[str, Any]]:
    from agents.extensions import ToolOutputTrimmer
    from hybrid_compaction.openai_agents import CompactionFilter

    return [
        {"name": "none (no filter), Agents SDK", "framework": "openai-agents",
         "inner": lambda trace: None,
         "setting": "`TraceFilter` alone (no `inner`): the items sent as the SDK passed them"},
        {"name": "Agents SDK `ToolOutputTrimmer` (defaults)", "framework": "openai-agents",
         "inner": lambda trace: ToolOutputTrimmer(),
         "setting": "`recent_turns=2, max_output_chars=500, preview_chars=200`"},
        {"name": "Agents SDK `ToolOutputTrimmer` (most aggressive)", "framework": "openai-agents",
         "inner": lambda trace: ToolOutputTrimmer(recent_turns=1, max_output_chars=1, preview_chars=0),
         "setting": "`recent_turns=1, max_output_chars=1, preview_chars=0`"},
        {"name": "ours: `CompactionFilter` (Agents SDK)", "framework": "openai-agents",
         "inner": lambda trace: CompactionFilter(policy(), trace=trace), "ours": True,
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
        {"name": "Agents SDK `ToolOutputTrimmer` (defaults), 3 questions", "framework": "openai-agents",
         "inner": lambda trace: ToolOutputTrimmer(), "conversation": QUESTIONS,
         "setting": f"defaults; {QUESTIONS} user turns, each a `Runner.run` on the last "
                    "`to_input_list()` plus the next question"},
        {"name": "ours: `CompactionFilter` (Agents SDK), 3 questions", "framework": "openai-agents",
         "inner": lambda trace: CompactionFilter(policy(), trace=trace), "ours": True,
         "conversation": QUESTIONS,
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
    ]


def pydantic_ai_configs() -> List[Dict[str, Any]]:
    from hybrid_compaction.pydantic_ai import CompactionProcessor
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    # pydantic-ai's docs, "History processors": keep only the last 5 messages ...
    async def keep_recent_messages(messages: List[Any]) -> List[Any]:
        return messages[-5:] if len(messages) > 5 else messages

    # ... and summarize the oldest 10 with another agent (here a stub model), keeping the last.
    summarizer = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(
        "Summary: the agent searched and fetched pages.")])))

    async def summarize_old_messages(messages: List[Any]) -> List[Any]:
        if len(messages) > 10:
            summary = await summarizer.run(message_history=messages[:10])
            return summary.new_messages() + messages[-1:]
        return messages

    return [
        {"name": "pydantic-ai docs: `keep_recent_messages` processor", "framework": "pydantic-ai",
         "processors": lambda trace: [keep_recent_messages],
         "setting": "`messages[-5:]` (the docs' example)"},
        {"name": "pydantic-ai docs: `summarize_old_messages` processor", "framework": "pydantic-ai",
         "processors": lambda trace: [summarize_old_messages],
         "setting": "oldest 10 summarized by an agent (stub model), last message kept"},
        {"name": "ours: `CompactionProcessor` (pydantic-ai)", "framework": "pydantic-ai", "ours": True,
         "processors": lambda trace: [CompactionProcessor(policy(), trace=trace)],
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
    ]


def run_agents_sdk(config: Dict[str, Any], trace: Any, rounds: int) -> bool:
    """One Agents SDK run under ``TraceFilter`` around the configuration's filter; whether the
    agent answered."""
    import fake_openai_agents
    from hybrid_compaction.openai_agents import TraceFilter

    inner = config["inner"](trace)
    recorder = TraceFilter(policy(), trace=trace, inner=inner)
    if "conversation" in config:
        results, _ = fake_openai_agents.conversation(recorder, rounds=rounds, seed=SEED,
                                                     questions=config["conversation"])
    else:
        results = [fake_openai_agents.run(recorder, rounds=rounds, seed=SEED)[0]]
    recorder.end_run()
    if inner is not None and hasattr(inner, "end_run"):
        inner.end_run()
    return all(r.final_output == fake_openai_agents.answer(q) for q, r in enumerate(results))


def expected_calls(config: Dict[str, Any], rounds: int) -> int:
    """The model calls a configuration's run makes: each question's tool rounds and answer (ADK:
    the rounds and one answer per invocation)."""
    if config["framework"] == "google-adk":
        return rounds + ADK_TURNS
    questions = config.get("conversation", 1)
    return questions * (max(1, rounds // questions) + 1)


def run_pydantic_ai(config: Dict[str, Any], rounds: int, trace: Any) -> bool:
    """The agent of ``fake_agents`` (its seeded script and tools) as a pydantic-ai agent on a
    ``FunctionModel``, its processors between a recorder's two."""
    import fake_agents
    from hybrid_compaction.pydantic_ai import Recorder
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    turns = iter(fake_agents.script(rounds, SEED))

    def model(messages: List[Any], info: Any) -> Any:
        m = next(turns)
        parts: List[Any] = [TextPart(m.content)] if m.content else []
        parts += [ToolCallPart(c["name"], c["args"], c["id"]) for c in m.tool_calls]
        return ModelResponse(parts=parts)

    recorder = Recorder(policy=policy(), trace=trace)
    own = config["processors"](trace)
    agent = Agent(FunctionModel(model), system_prompt=fake_agents.SYSTEM_PROMPT, capabilities=[
        ProcessHistory(recorder.history), *[p if hasattr(p, "before_model_request") else ProcessHistory(p)
                                            for p in own], ProcessHistory(recorder.sent)])

    @agent.tool_plain
    def search(query: str) -> str:
        return str(fake_agents.search.invoke({"query": query}))

    @agent.tool_plain
    def fetch(url: str) -> str:
        return str(fake_agents.fetch.invoke({"url": url}))

    result = agent.run_sync("Find out about the topics, please.")
    recorder.close()
    for p in own:
        if hasattr(p, "close"):
            p.close()
    return bool(result.output == "Here is what I found.")


#: Google ADK compacts after an invocation: its runs are this many invocations (user turns), the
#: rounds split between them.
ADK_TURNS = 4


def google_adk_configs() -> List[Dict[str, Any]]:
    from google.adk.apps import App
    from google.adk.apps._configs import EventsCompactionConfig
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
    from hybrid_compaction.google_adk import CompactionCallback

    def summarizer() -> Any:
        return LlmEventSummarizer(llm=_adk_model(None, 0))

    return [
        {"name": "none (Google ADK, no compaction)", "framework": "google-adk",
         "events": lambda: None, "callback": lambda trace: None, "app": App,
         "setting": f"`LlmAgent` in an `App`, {ADK_TURNS} invocations of one session"},
        {"name": "Google ADK `EventsCompactionConfig` (sliding window)", "framework": "google-adk",
         "events": lambda: EventsCompactionConfig(compaction_interval=1, overlap_size=0,
                                                  summarizer=summarizer()),
         "callback": lambda trace: None, "app": App,
         "setting": "`compaction_interval=1, overlap_size=0`, stub summarizer (after each invocation)"},
        {"name": "Google ADK `EventsCompactionConfig` (token threshold)", "framework": "google-adk",
         "events": lambda: EventsCompactionConfig(token_threshold=TRIGGER, event_retention_size=6,
                                                  summarizer=summarizer()),
         "callback": lambda trace: None, "app": App,
         "setting": f"`token_threshold={TRIGGER}, event_retention_size=6`, stub summarizer"},
        {"name": "ours: `CompactionCallback` (Google ADK)", "framework": "google-adk", "ours": True,
         "events": lambda: None, "app": App,
         "callback": lambda trace: CompactionCallback(policy(), trace=trace),
         "setting": f"hard limit {HARD_LIMIT} o200k tokens, retention {RETENTION}, no reducer"},
    ]


def _adk_model(turns: Any, per_turn: int) -> Any:
    """A ``BaseLlm`` replaying the LangChain fake's script, ``per_turn`` tool rounds per
    invocation then an answer, reporting its prompt's o200k tokens; with no script, a
    summarizer's stub."""
    import json

    import hybrid_compaction as hc
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    class Scripted(BaseLlm):
        model: str = "scripted"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            text = json.dumps([c.model_dump(mode="json", exclude_none=True)
                               for c in llm_request.contents], ensure_ascii=False)
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=hc.count_tokens([text])[0])
            if turns is None:
                parts = [types.Part(text="Summary: the agent searched and fetched pages.")]
            else:
                last = llm_request.contents[-1]
                user_turn = last.role == "user" and any(p.text for p in last.parts or [])
                rounds_done = 0 if user_turn else getattr(self, "_done", 0)
                if rounds_done < per_turn:
                    m = next(turns)
                    parts = ([types.Part(text=m.content)] if m.content else []) + [
                        types.Part(function_call=types.FunctionCall(name=c["name"], args=c["args"]))
                        for c in m.tool_calls]
                    object.__setattr__(self, "_done", rounds_done + 1)
                else:
                    parts = [types.Part(text="Here is what I found.")]
            yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)

    return Scripted()


def run_google_adk(config: Dict[str, Any], rounds: int, trace: Any) -> bool:
    """The fake agents' script as an ADK agent over ``ADK_TURNS`` invocations of one session."""
    import fake_agents
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from hybrid_compaction.google_adk import TraceCallback

    def search(query: str) -> str:
        """Searches the web for ``query``."""
        return str(fake_agents.search.invoke({"query": query}))

    def fetch(url: str) -> str:
        """Fetches the page at ``url``."""
        return str(fake_agents.fetch.invoke({"url": url}))

    script = iter(fake_agents.script(rounds, SEED))
    own = config["callback"](trace)
    recorder = TraceCallback(policy=policy(), trace=trace, inner=own)
    agent = LlmAgent(name="researcher", model=_adk_model(script, rounds // ADK_TURNS),
                     instruction=fake_agents.SYSTEM_PROMPT, tools=[search, fetch],
                     before_model_callback=recorder)
    app = config["app"](name="peers", root_agent=agent, events_compaction_config=config["events"]())
    runner = InMemoryRunner(app=app)

    async def go() -> str:
        session = await runner.session_service.create_session(app_name="peers", user_id="u")
        answer = ""
        for turn in range(ADK_TURNS):
            message = types.Content(role="user", parts=[types.Part(text=f"Part {turn + 1}: find out about the topics, please.")])
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if event.content and event.content.parts and event.content.parts[0].text:
                    answer = event.content.parts[0].text
        return answer

    answered = asyncio.run(go()) == "Here is what I found."
    recorder.close()
    if own is not None:
        own.close()
    return answered


def run_one(config: Dict[str, Any], rounds: int) -> Dict[str, Any]:
    """Runs one configuration and checks its trace."""
    import hybrid_compaction as hc

    buffer = io.StringIO()
    started = time.perf_counter()
    with hc.TraceWriter(buffer) as trace:
        if config["framework"] == "langchain":
            import fake_agents
            from hybrid_compaction.langchain import TraceMiddleware

            middleware = [TraceMiddleware(policy=policy(), trace=trace), *config["middleware"](trace)]
            state = fake_agents.agent(middleware, rounds=rounds, seed=SEED).invoke(fake_agents.question())
            answered = state["messages"][-1].content == "Here is what I found."
        elif config["framework"] == "openai-agents":
            answered = run_agents_sdk(config, trace, rounds)
        elif config["framework"] == "pydantic-ai":
            answered = run_pydantic_ai(config, rounds, trace)
        elif config["framework"] == "google-adk":
            answered = run_google_adk(config, rounds, trace)
        else:
            import fake_af
            from hybrid_compaction.agent_framework import TraceMiddleware as AfTrace

            recorder = AfTrace(policy=policy(), trace=trace)
            chat = config.get("chat", lambda trace: [])(trace)
            agent = fake_af.agent([recorder, *chat], rounds=rounds, seed=SEED,
                                  compaction_strategy=config["strategy"]())
            response = asyncio.run(agent.run(fake_af.QUESTION))
            recorder.end_run()
            for m in chat:
                m.close()
            answered = response.messages[-1].text == "Here is what I found."
    seconds = time.perf_counter() - started
    report = hc.check(buffer.getvalue())
    violations = report["violations"]
    by_call = {(v["run"], v["call"]) for v in violations if v["run"] and v["call"].startswith("model-")}
    first = violations[0] if violations else None
    return {
        "name": config["name"], "setting": config["setting"], "ours": config.get("ours", False),
        "observed": report["observed"], "records": report["calls"], "answered": answered,
        "clauses": Counter(v["clause"] for v in violations), "calls_violating": len(by_call),
        "first": first, "seconds": seconds, "expected": expected_calls(config, rounds),
    }


def table(results: List[Dict[str, Any]], rounds: int) -> str:
    L = []
    L.append("| compaction under test | setting | model calls checked | calls with a violation | "
             "violations by clause | first violating call |")
    L.append("|---|---|---:|---:|---|---|")
    for r in results:
        clauses = ", ".join(f"{c}: {n}" for c, n in sorted(r["clauses"].items())) or "0"
        f = r["first"]
        first = f"`{f['call']}` {f['clause']}: {f['message'][:110]}" if f else "none"
        extra = "" if r["records"] == r["observed"] else f" (+ {r['records'] - r['observed']} full call records)"
        L.append(f"| {r['name']} | {r['setting']} | {r['observed']}{extra} | {r['calls_violating']} | "
                 f"{clauses} | {first} |")
    return "\n".join(L)


def section(results: List[Dict[str, Any]], rounds: int, elapsed: float) -> str:
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in (
        "langchain", "langchain-core", "langgraph", "agent-framework-core", "openai-agents",
        "pydantic-ai-slim", "google-adk", "hybrid-compaction"))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ours = [r for r in results if r["ours"]]
    clean = all(not r["clauses"] for r in ours)
    return "\n".join([
        BEGIN,
        "## Runtime: real agent loops, every model call judged",
        "",
        f"Regenerate with `python3 peers/runtime.py` (CI runs `--smoke`: 8 rounds). Run: {now}, "
        f"{platform.machine()} Python {platform.python_version()}; {versions}; "
        f"{elapsed:.1f} s for all configurations.",
        "",
        f"**Method.** A LangChain `create_agent` loop, an Agent Framework agent (chat client "
        f"composed the framework's way, so chat middleware and the compaction strategy run at every "
        f"model call of the tool loop), an OpenAI Agents SDK run (`Runner.run_sync`; the SDK "
        f"calls its one `call_model_input_filter` before every model call) and a pydantic-ai agent "
        f"on its own `FunctionModel` (its history processors run before every model request), each "
        f"on a seeded fake model (`python/tests/fake_agents.py`, `fake_af.py`, "
        f"`fake_openai_agents.py`, the SDK's own `ScriptedModel`; seed {SEED}): {rounds} rounds of "
        f"1-3 parallel tool calls with results of 1.6 to 2.7 KB, then an answer, so {rounds + 1} "
        f"model calls per run (the Agents SDK conversations: {QUESTIONS} questions of "
        f"{rounds // QUESTIONS} rounds each, {QUESTIONS * (rounds // QUESTIONS + 1)} calls). "
        f"`TraceMiddleware` (listed first), `TraceFilter` (around the filter under test) or the "
        f"`Recorder`'s processors (first and last) record, "
        f"for every model call, the history the agent held before any compaction "
        f"(the system prompt in front) and what the model received; `hc.check` judges each call "
        f"(SPEC TRC-13) against hard limit {HARD_LIMIT} o200k tokens and retention {RETENTION}: "
        f"TRC-2 nothing sent over the hard limit, TRC-3 what was sent verifies against the history "
        f"(kept messages unchanged, new ones only summaries), TRC-4 the required messages kept, TRC-5 "
        f"tool exchanges atomic. Each framework's compaction is told to act at {TRIGGER} tokens "
        f"where it takes a budget (pydantic-ai's processors are its docs' examples, as written "
        f"there). The Agents SDK's `ToolOutputTrimmer` never touches what follows "
        f"the `recent_turns`-th last user message, so in a run answering one question it trims "
        f"nothing (the conversation rows show it at work); its session limits (`SessionSettings(limit=)`) choose which stored items a run "
        f"starts from and do not act inside a run, so they have no row. Google "
        f"ADK compacts a session's events after an invocation, so its agent (an `LlmAgent` in an "
        f"`App` on a `BaseLlm` replaying the same script and reporting its prompt's o200k "
        f"tokens) runs the rounds as {ADK_TURNS} invocations of one session ({rounds + ADK_TURNS} "
        f"model calls), `TraceCallback` recording around the `before_model_callback`.",
        "",
        table(results, rounds),
        "",
        ("Ours (`CompactionMiddleware`, `CompactionFilter`, `CompactionProcessor`, "
         "`CompactionCallback`): 0 violations in every framework (their full call records, "
         "replayed by the checker, check clean too)." if clean else
         "**Ours has violations: this is a bug.**"),
        "",
        END,
    ])


def write(text: str) -> pathlib.Path:
    path = ROOT / "docs" / "PEERS.md"
    page = path.read_text(encoding="utf-8")
    if BEGIN in page and END in page:
        page = page[: page.index(BEGIN)] + text + page[page.index(END) + len(END):]
    else:
        page = page.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(page, encoding="utf-8")
    return path


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="8 rounds, no file written (CI)")
    ap.add_argument("--rounds", type=int, default=None, help="tool rounds per run (default 36)")
    args = ap.parse_args(argv)
    rounds = args.rounds or (8 if args.smoke else 36)
    if args.smoke:  # a shorter run compacts at the same relative point: half the budget
        global HARD_LIMIT, TRIGGER
        HARD_LIMIT, TRIGGER = HARD_LIMIT // 2, TRIGGER // 2
    started = time.perf_counter()
    configs: List[Dict[str, Any]] = (langchain_configs() + agent_framework_configs()
                                     + openai_agents_configs())
    configs += pydantic_ai_configs()
    configs += google_adk_configs()
    results = [run_one(c, rounds) for c in configs]
    elapsed = time.perf_counter() - started
    print(table(results, rounds))
    problems = [f"{r['name']}: {dict(r['clauses'])}" for r in results if r["ours"] and r["clauses"]]
    problems += [f"{r['name']}: {r['observed']} calls checked, {r['expected']} expected"
                 for r in results if r["observed"] != r["expected"]]
    problems += [f"{r['name']}: the agent did not finish" for r in results if not r["answered"]]
    if not args.smoke:
        print(f"wrote {write(section(results, rounds, elapsed))}")
    for p in problems:
        print(f"runtime peers: {p}", file=sys.stderr)
    print(f"runtime peers: {len(results)} configurations, {elapsed:.1f} s, "
          + ("FAILED" if problems else "ok"), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
