//! # Seeded agent conversations: the workload of benches and the peer harness
//!
//! [`generate`] builds a realistic agent conversation of exactly `messages` messages from a seed:
//! one system message, user turns, assistant turns that make 1-3 parallel tool calls followed by
//! their results (most a few hundred bytes, about one in eight 2-20 KB; prose, code, logs and
//! JSON, with CJK, accents and emoji), plain final answers, and now and then a summary of the
//! earlier turns. The **last message** is one of four [`Ending`]s, cycling with the seed
//! (`seed % 4`) unless one is asked for: a user question, a complete set of tool results, a
//! pending call (results not yet there), a final answer.
//!
//! The conversation is format-neutral ([`Conversation`]) and is exported as a transcript object
//! of every format the project reads (SPEC TRN-1 .. TRN-4) by [`Conversation::transcript`]:
//! every message has a stable id (`m0`, `m1`, ...; LangChain's own `id` member, `ids` for the
//! others, SPEC TRN-5) and summaries carry a kind override to `Summary` (CLS-1 step 3). Anthropic
//! has no tool role: the results of one parallel call set travel in one `user` message of
//! `tool_result` blocks, so its transcript has fewer messages (and ids) than the others; its
//! summaries are `user` messages (an assistant one would join the assistant turn after it, TRN-23).
//!
//! The same `(messages, seed)` always yields the same conversation, in every format, on every
//! machine: the random stream is SplitMix64, the texts come from fixed pools. `hybrid-compaction
//! workload` prints it; the Python package exposes it as `hybrid_compaction.workload`.

#![allow(
    clippy::cast_possible_truncation,
    reason = "random draws are from small ranges"
)]

use std::fmt;

use hybrid_compaction::transcript::TranscriptFormat;
use serde_json::{json, Map, Value as Json};

use crate::corpus::generated::SplitMix64;

/// The fewest messages a conversation can have: the system message and the longest ending.
pub const MIN_MESSAGES: usize = 7;

/// The most messages a conversation can have (it is built in memory).
pub const MAX_MESSAGES: usize = 1_000_000;

/// The shape of a conversation's last message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The user asked something the assistant has not answered.
    UserQuestion,
    /// The assistant called tools and every result is in: the model is called next.
    ToolResults,
    /// The assistant called tools whose results are not in yet.
    PendingCall,
    /// The assistant answered in text.
    FinalAnswer,
}

impl Ending {
    /// Every ending, in the order seeds cycle through them.
    pub const ALL: [Ending; 4] = [
        Ending::UserQuestion,
        Ending::ToolResults,
        Ending::PendingCall,
        Ending::FinalAnswer,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Ending::UserQuestion => "user-question",
            Ending::ToolResults => "tool-results",
            Ending::PendingCall => "pending-call",
            Ending::FinalAnswer => "final-answer",
        }
    }

    /// Reads a command-line name.
    pub fn from_name(name: &str) -> Option<Ending> {
        Ending::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The ending a seed gets when none is asked for.
    pub fn of_seed(seed: u64) -> Ending {
        Ending::ALL[(seed % 4) as usize]
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One tool call: id, tool name, argument object.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call id (`call_{seed}_{k}`).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Json,
}

/// One message of a format-neutral conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// The system message (first, once).
    System(String),
    /// A user message.
    User(String),
    /// An assistant message: text (maybe empty) and 0-3 tool calls.
    Assistant {
        /// The text.
        text: String,
        /// The parallel tool calls.
        calls: Vec<Call>,
    },
    /// One tool result.
    Tool {
        /// The call it answers.
        call_id: String,
        /// The result text.
        text: String,
    },
    /// A summary of earlier turns (an assistant text message classified `Summary`; a user one in
    /// Anthropic's format).
    Summary(String),
}

/// A generated conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The seed it was generated from.
    pub seed: u64,
    /// Its last message's shape.
    pub ending: Ending,
    /// The messages, in order; `turns[i]` has id `m{i}`.
    pub turns: Vec<Turn>,
}

/// Why a workload cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("messages: expected a whole number from {MIN_MESSAGES} to {MAX_MESSAGES}, got {0}")]
pub struct WorkloadError(pub usize);

/// Generates the conversation of `messages` messages for `seed`, ending as `ending` (default:
/// [`Ending::of_seed`]).
pub fn generate(
    messages: usize,
    seed: u64,
    ending: Option<Ending>,
) -> Result<Conversation, WorkloadError> {
    if !(MIN_MESSAGES..=MAX_MESSAGES).contains(&messages) {
        return Err(WorkloadError(messages));
    }
    let ending = ending.unwrap_or(Ending::of_seed(seed));
    let mut g = Gen {
        rng: SplitMix64::new(seed ^ 0x5745_4C4F_4144_u64),
        seed,
        next_call: 0,
        turns: Vec::with_capacity(messages),
    };
    let system = g.system();
    g.turns.push(Turn::System(system));
    let tail_calls = 1 + g.rng.below(3) as usize;
    let tail_len = match ending {
        Ending::UserQuestion => 1,
        Ending::PendingCall => 2,
        Ending::ToolResults => 2 + tail_calls,
        Ending::FinalAnswer => 3 + tail_calls,
    };
    let body = messages - 1 - tail_len;
    g.body(body);
    g.tail(ending, tail_calls);
    debug_assert_eq!(g.turns.len(), messages);
    Ok(Conversation {
        seed,
        ending,
        turns: g.turns,
    })
}

struct Gen {
    rng: SplitMix64,
    seed: u64,
    next_call: u64,
    turns: Vec<Turn>,
}

impl Gen {
    /// `len` messages of whole turns (each ends with a final answer).
    fn body(&mut self, len: usize) {
        let mut left = len;
        while left > 0 {
            // A summary fills a gap no turn fits (one or three messages left) and comes now and
            // then between turns.
            if left == 1 || left == 3 || (left > 16 && self.rng.chance(1, 30)) {
                let s = self.summary();
                self.turns.push(Turn::Summary(s));
                left -= 1;
                continue;
            }
            let rounds = self.round_sizes(left);
            self.turn(&rounds);
            left -= 2 + rounds.iter().map(|k| k + 1).sum::<usize>();
        }
    }

    /// The call counts of the tool rounds of a turn: random, or, when `left` (2 or >= 4) is
    /// small, exactly `left` messages (user + final + rounds of 1 + k messages, k = 1..3).
    fn round_sizes(&mut self, left: usize) -> Vec<usize> {
        if left <= 16 {
            let mut rest = left - 2;
            let mut rounds = Vec::new();
            while rest > 0 {
                let k = match rest {
                    2..=4 => rest - 1,
                    5 => 1 + self.rng.below(2) as usize, // 2 + 3 or 3 + 2
                    _ => 1 + self.rng.below(3) as usize,
                };
                rounds.push(k);
                rest -= k + 1;
            }
            return rounds;
        }
        let n = match self.rng.below(10) {
            0..=2 => 0,
            3..=6 => 1,
            7..=8 => 2,
            _ => 3,
        };
        (0..n).map(|_| 1 + self.rng.below(3) as usize).collect()
    }

    fn turn(&mut self, rounds: &[usize]) {
        let q = self.user();
        self.turns.push(Turn::User(q));
        for &k in rounds {
            let ids = self.calls(k);
            self.results(&ids);
        }
        let a = self.answer();
        self.turns.push(Turn::Assistant {
            text: a,
            calls: Vec::new(),
        });
    }

    fn tail(&mut self, ending: Ending, calls: usize) {
        let q = self.user();
        self.turns.push(Turn::User(q));
        if ending == Ending::UserQuestion {
            return;
        }
        let ids = self.calls(calls);
        if ending == Ending::PendingCall {
            return;
        }
        self.results(&ids);
        if ending == Ending::FinalAnswer {
            let a = self.answer();
            self.turns.push(Turn::Assistant {
                text: a,
                calls: Vec::new(),
            });
        }
    }

    /// An assistant message with `k` parallel calls; returns the call ids.
    fn calls(&mut self, k: usize) -> Vec<(String, String)> {
        let mut calls = Vec::with_capacity(k);
        for _ in 0..k {
            let id = format!("call_{}_{}", self.seed, self.next_call);
            self.next_call += 1;
            let (name, arguments) = self.arguments();
            calls.push(Call {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
        let text = if self.rng.chance(1, 2) {
            String::new()
        } else {
            self.prose(20, 160)
        };
        let ids = calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        self.turns.push(Turn::Assistant { text, calls });
        ids
    }

    fn results(&mut self, ids: &[(String, String)]) {
        for (id, name) in ids {
            let text = self.result(name);
            self.turns.push(Turn::Tool {
                call_id: id.clone(),
                text,
            });
        }
    }

    fn pick<'a>(&mut self, pool: &[&'a str]) -> &'a str {
        pool[self.rng.below(pool.len() as u64) as usize]
    }

    /// Text of `lo..=hi` bytes (about: whole phrases) from the prose pool.
    fn prose(&mut self, lo: usize, hi: usize) -> String {
        let target = self.rng.range(lo as i64, hi as i64) as usize;
        let mut s = String::with_capacity(target + 64);
        while s.len() < target {
            s.push_str(self.pick(PROSE));
        }
        s.trim_end().to_owned()
    }

    fn system(&mut self) -> String {
        let mut s = String::from(SYSTEM);
        s.push_str(&self.prose(100, 500));
        s
    }

    fn user(&mut self) -> String {
        let mut s = self.pick(QUESTIONS).to_owned();
        if self.rng.chance(2, 3) {
            s.push(' ');
            s.push_str(&self.prose(20, 500));
        }
        s
    }

    fn answer(&mut self) -> String {
        self.prose(60, 1500)
    }

    fn summary(&mut self) -> String {
        format!(
            "Summary of the earlier conversation: {}",
            self.prose(200, 1200)
        )
    }

    fn arguments(&mut self) -> (&'static str, Json) {
        let n = self.rng.below(10_000);
        match self.rng.below(5) {
            0 => (
                "read_file",
                json!({"path": format!("src/module_{n}/lib.rs"), "start": (n % 400) as i64, "limit": 200}),
            ),
            1 => (
                "search_code",
                json!({"query": self.pick(QUERIES), "max_results": 20, "regex": false}),
            ),
            2 => (
                "run_tests",
                json!({"filter": format!("test_case_{n}"), "timeout_s": 120.5}),
            ),
            3 => (
                "fetch_url",
                json!({"url": format!("https://docs.example.org/page/{n}"), "headers": {"accept": "text/html"}}),
            ),
            _ => (
                "query_db",
                json!({"sql": format!("SELECT id, name FROM users WHERE id > {n} LIMIT 50"), "params": [n, "ünïcödé"]}),
            ),
        }
    }

    /// A tool result: usually 100-1500 bytes, one in eight 2-20 KB.
    fn result(&mut self, tool: &str) -> String {
        let (lo, hi) = if self.rng.chance(1, 8) {
            (2_048, 20_480)
        } else {
            (100, 1_500)
        };
        let target = self.rng.range(lo, hi) as usize;
        let pool = match tool {
            "read_file" => CODE,
            "run_tests" => LOG,
            "query_db" => ROWS,
            _ => PROSE,
        };
        let mut s = String::with_capacity(target + 128);
        let mut line = 1;
        while s.len() < target {
            if tool == "read_file" || tool == "run_tests" {
                s.push_str(&format!("{line:>4} | "));
                line += 1;
            }
            s.push_str(self.pick(pool));
        }
        s
    }
}

const SYSTEM: &str =
    "You are a careful software engineering agent. Use the tools to read code, search, \
run tests and query data; cite what you read; never invent tool results. Réponds dans la langue \
de l'utilisateur. ";

const QUESTIONS: &[&str] = &[
    "Why does the nightly build fail on the integration tests?",
    "Can you find where the retry budget is configured?",
    "Please summarise what changed in the scheduler this week.",
    "上下文压缩是在哪里触发的？请找到相关代码。",
    "Wie viele Nutzer haben sich seit Montag angemeldet?",
    "Is the cache invalidated when the schema version changes? 🤔",
    "Fix the flaky test in the payment module, then run the suite again.",
    "¿Qué hace exactamente la función de normalización de direcciones?",
];

const PROSE: &[&str] = &[
    "Let me look at the failing test first and then check the runner's configuration. ",
    "The function returns early when the cache is empty, which hides the real error. ",
    "I compared both branches; the difference is in how the timeout is propagated. ",
    "上下文压缩需要在每次调用前决定发送哪些消息，并保证工具调用成对出现。",
    "Deploy finished 🚀 — all 12 checks passed ✅, but the canary reports a 3 % error rate. ",
    "Die Konfiguration wird beim Start gelesen und danach nicht mehr geändert. ",
    "The retry loop doubles the delay each time (100 ms, 200 ms, 400 ms …) up to 5 attempts. ",
    "Ce module gère la sérialisation des événements et leur rejeu après une panne. ",
    "Next I will run the narrower test filter to confirm the fix before the full suite. ",
];

const CODE: &[&str] = &[
    "fn retry<T>(mut f: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {\n",
    "    for attempt in 0..MAX_ATTEMPTS {\n",
    "        match f() { Ok(v) => return Ok(v), Err(e) if e.is_transient() => sleep(backoff(attempt)), Err(e) => return Err(e) }\n",
    "    }\n",
    "// 注意：这里的超时单位是毫秒\n",
    "let cache = HashMap::with_capacity(1024); // größer als nötig\n",
    "}\n",
];

const LOG: &[&str] = &[
    "test scheduler::tests::drains_queue ... ok\n",
    "test payment::tests::refund_twice ... FAILED\n",
    "thread 'payment::tests::refund_twice' panicked at src/payment.rs:214:9: assertion failed: left == right\n",
    "WARN  retrying request id=7f3a after 200ms (attempt 2/5)\n",
    "INFO  résumé généré en 1.2 s — 42 entrées ✔\n",
];

const ROWS: &[&str] = &[
    "{\"id\": 1042, \"name\": \"Zoë Müller\", \"created_at\": \"2026-11-02T09:14:00Z\"}\n",
    "{\"id\": 1043, \"name\": \"李雷\", \"created_at\": \"2026-11-02T09:15:12Z\"}\n",
    "{\"id\": 1044, \"name\": \"José Ñúñez\", \"created_at\": \"2026-11-03T17:01:45Z\"}\n",
    "{\"id\": 1045, \"name\": \"Ana 👩‍💻 Silva\", \"created_at\": \"2026-11-04T08:00:00Z\"}\n",
];

const QUERIES: &[&str] = &[
    "retry_budget",
    "fn invalidate",
    "SchemaVersion",
    "压缩",
    "TODO(flaky)",
];

impl Conversation {
    /// The id of message `i` (SPEC TRN-5: given, stable).
    pub fn id(i: usize) -> String {
        format!("m{i}")
    }

    /// The conversation as a transcript object of `format` (`{"format", "messages", "system"?,
    /// "ids"?, "overrides"?}`), readable by `Transcript::parse` and the wire's `transcript`.
    pub fn transcript(&self, format: TranscriptFormat) -> Json {
        match format {
            TranscriptFormat::OpenAiChat => self.openai(),
            TranscriptFormat::AnthropicMessages => self.anthropic(),
            TranscriptFormat::LangChain => self.langchain(),
            TranscriptFormat::OpenAiResponses => self.responses(),
            TranscriptFormat::PydanticAi => self.pydantic_ai(),
            TranscriptFormat::Gemini => self.gemini(),
            TranscriptFormat::AiSdk => self.ai_sdk(),
        }
    }

    /// The AI SDK (SPEC TRN-20): the system prompt a `system` message, a user turn a `user`
    /// message of a string, an assistant turn an `assistant` message of its `text` and
    /// `tool-call` parts, consecutive results one `tool` message of `tool-result` parts (as one
    /// step's results are, so a merged message has its first result's id).
    fn ai_sdk(&self) -> Json {
        let mut messages: Vec<Json> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let mut overrides = Map::new();
        let mut last_was_tool = false;
        for (i, t) in self.turns.iter().enumerate() {
            let m = match t {
                Turn::Tool { call_id, text } => {
                    let part = json!({"type": "tool-result", "toolCallId": call_id,
                        "toolName": "tool", "output": {"type": "text", "value": text}});
                    if let (true, Some(Json::Array(parts))) = (
                        last_was_tool,
                        messages.last_mut().and_then(|m| m.get_mut("content")),
                    ) {
                        parts.push(part);
                        continue;
                    }
                    json!({"role": "tool", "content": [part]})
                }
                Turn::System(s) => json!({"role": "system", "content": s}),
                Turn::User(s) => json!({"role": "user", "content": s}),
                Turn::Summary(s) => {
                    overrides.insert(ids.len().to_string(), json!("Summary"));
                    json!({"role": "assistant", "content": s})
                }
                Turn::Assistant { text, calls } => {
                    let mut parts = Vec::new();
                    if !text.is_empty() || calls.is_empty() {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    parts.extend(calls.iter().map(|c| {
                        json!({"type": "tool-call", "toolCallId": c.id, "toolName": c.name,
                               "input": c.arguments})
                    }));
                    json!({"role": "assistant", "content": parts})
                }
            };
            last_was_tool = matches!(t, Turn::Tool { .. });
            messages.push(m);
            ids.push(Conversation::id(i));
        }
        json!({"format": "ai-sdk", "messages": messages, "ids": ids, "overrides": overrides})
    }

    /// OpenAI Responses: the system prompt as the top-level `instructions` (the transcript's
    /// `system`), each call its own `function_call` item (parallel calls consecutive), each
    /// result a `function_call_output`; an assistant turn's text an `output_text` message. Ids:
    /// `m{i}` for a turn's first item, `m{i}.{k}` for its `k`-th further call.
    fn responses(&self) -> Json {
        let mut system = None;
        let mut items: Vec<Json> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let mut overrides = Map::new();
        for (i, t) in self.turns.iter().enumerate() {
            let id = Conversation::id(i);
            match t {
                Turn::System(s) => {
                    system = Some(s.clone());
                    ids.push(id);
                    continue;
                }
                Turn::User(s) => items.push(json!({"role": "user", "content": s})),
                Turn::Summary(s) => {
                    overrides.insert(ids.len().to_string(), json!("Summary"));
                    items.push(json!({"role": "assistant", "content": s}));
                }
                Turn::Assistant { text, calls } => {
                    let mut first = true;
                    if !text.is_empty() || calls.is_empty() {
                        items.push(json!({"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": text}]}));
                        ids.push(id.clone());
                        first = false;
                    }
                    for (k, c) in calls.iter().enumerate() {
                        items.push(json!({"type": "function_call", "call_id": c.id,
                            "name": c.name, "arguments": c.arguments.to_string()}));
                        ids.push(if first {
                            id.clone()
                        } else {
                            format!("{id}.{}", k + 1)
                        });
                        first = false;
                    }
                    continue;
                }
                Turn::Tool { call_id, text } => items.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": text}),
                ),
            }
            ids.push(id);
        }
        let mut out = json!({"format": "openai-responses", "messages": items, "ids": ids,
                             "overrides": overrides});
        if let Some(s) = system {
            out["system"] = json!(s);
        }
        out
    }

    fn summaries(&self) -> Map<String, Json> {
        self.turns
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t, Turn::Summary(_)))
            .map(|(i, _)| (i.to_string(), json!("Summary")))
            .collect()
    }

    fn openai(&self) -> Json {
        let messages: Vec<Json> = self
            .turns
            .iter()
            .map(|t| match t {
                Turn::System(s) => json!({"role": "system", "content": s}),
                Turn::User(s) => json!({"role": "user", "content": s}),
                Turn::Summary(s) => json!({"role": "assistant", "content": s}),
                Turn::Assistant { text, calls } if calls.is_empty() => {
                    json!({"role": "assistant", "content": text})
                }
                Turn::Assistant { text, calls } => json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Json::Null } else { json!(text) },
                    "tool_calls": calls.iter().map(|c| json!({
                        "id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments.to_string()},
                    })).collect::<Vec<_>>(),
                }),
                Turn::Tool { call_id, text } => {
                    json!({"role": "tool", "tool_call_id": call_id, "content": text})
                }
            })
            .collect();
        let ids: Vec<String> = (0..messages.len()).map(Conversation::id).collect();
        json!({"format": "openai-chat", "messages": messages, "ids": ids,
               "overrides": self.summaries()})
    }

    fn langchain(&self) -> Json {
        let messages: Vec<Json> = self
            .turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let id = Conversation::id(i);
                match t {
                    Turn::System(s) => json!({"type": "system", "content": s, "id": id}),
                    Turn::User(s) => json!({"type": "human", "content": s, "id": id}),
                    Turn::Summary(s) => json!({"type": "ai", "content": s, "id": id}),
                    Turn::Assistant { text, calls } => json!({
                        "type": "ai", "content": text, "id": id,
                        "tool_calls": calls.iter().map(|c| json!({
                            "id": c.id, "name": c.name, "args": c.arguments, "type": "tool_call",
                        })).collect::<Vec<_>>(),
                    }),
                    Turn::Tool { call_id, text } => json!({
                        "type": "tool", "content": text, "tool_call_id": call_id, "id": id,
                    }),
                }
            })
            .collect();
        json!({"format": "langchain", "messages": messages, "overrides": self.summaries()})
    }

    /// Gemini (SPEC TRN-22): the system prompt the `system` instruction (a string), a user turn
    /// a `user` content of one `text` part, an assistant turn a `model` content of its text and
    /// `function_call` parts (with ids), consecutive results one `user` content of
    /// `function_response` parts (as Anthropic's, so a merged content has its first result's id).
    fn gemini(&self) -> Json {
        let mut system = None;
        let mut contents: Vec<Json> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let mut overrides = Map::new();
        let mut last_was_tool = false;
        for (i, t) in self.turns.iter().enumerate() {
            let m = match t {
                Turn::System(s) => {
                    system = Some(s.clone());
                    ids.push(Conversation::id(i));
                    continue;
                }
                Turn::Tool { call_id, text } => {
                    let part = json!({"function_response": {"id": call_id, "name": "tool",
                        "response": {"result": text}}});
                    if let (true, Some(Json::Array(parts))) = (
                        last_was_tool,
                        contents.last_mut().and_then(|m| m.get_mut("parts")),
                    ) {
                        parts.push(part);
                        continue;
                    }
                    json!({"role": "user", "parts": [part]})
                }
                Turn::User(s) => json!({"role": "user", "parts": [{"text": s}]}),
                Turn::Summary(s) => {
                    overrides.insert(ids.len().to_string(), json!("Summary"));
                    json!({"role": "model", "parts": [{"text": s}]})
                }
                Turn::Assistant { text, calls } => {
                    let mut parts = Vec::new();
                    if !text.is_empty() || calls.is_empty() {
                        parts.push(json!({"text": text}));
                    }
                    parts.extend(calls.iter().map(|c| {
                        json!({"function_call": {"id": c.id, "name": c.name, "args": c.arguments}})
                    }));
                    json!({"role": "model", "parts": parts})
                }
            };
            last_was_tool = matches!(t, Turn::Tool { .. });
            contents.push(m);
            ids.push(Conversation::id(i));
        }
        json!({"format": "gemini", "system": system, "messages": contents, "ids": ids,
               "overrides": overrides})
    }

    /// pydantic-ai (SPEC TRN-21): the system prompt a request of one `system-prompt` part, a
    /// user turn a request of one `user-prompt` part, an assistant turn a response of its `text`
    /// and `tool-call` parts, consecutive results one request of `tool-return` parts (as
    /// Anthropic's, so a merged request has its first result's id).
    fn pydantic_ai(&self) -> Json {
        let mut messages: Vec<Json> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let mut overrides = Map::new();
        let mut last_was_tool = false;
        let request = |kind: &str, content: &str| json!({"kind": "request", "parts": [{"part_kind": kind, "content": content}]});
        for (i, t) in self.turns.iter().enumerate() {
            let m = match t {
                Turn::Tool { call_id, text } => {
                    let part = json!({"part_kind": "tool-return", "tool_name": "tool",
                        "tool_call_id": call_id, "content": text});
                    if let (true, Some(Json::Array(parts))) = (
                        last_was_tool,
                        messages.last_mut().and_then(|m| m.get_mut("parts")),
                    ) {
                        parts.push(part);
                        continue;
                    }
                    json!({"kind": "request", "parts": [part]})
                }
                Turn::System(s) => request("system-prompt", s),
                Turn::User(s) => request("user-prompt", s),
                Turn::Summary(s) => {
                    overrides.insert(ids.len().to_string(), json!("Summary"));
                    json!({"kind": "response", "parts": [{"part_kind": "text", "content": s}]})
                }
                Turn::Assistant { text, calls } => {
                    let mut parts = Vec::new();
                    if !text.is_empty() || calls.is_empty() {
                        parts.push(json!({"part_kind": "text", "content": text}));
                    }
                    parts.extend(calls.iter().map(|c| {
                        json!({"part_kind": "tool-call", "tool_name": c.name,
                               "args": c.arguments, "tool_call_id": c.id})
                    }));
                    json!({"kind": "response", "parts": parts})
                }
            };
            last_was_tool = matches!(t, Turn::Tool { .. });
            messages.push(m);
            ids.push(Conversation::id(i));
        }
        json!({"format": "pydantic-ai", "messages": messages, "ids": ids, "overrides": overrides})
    }

    /// Anthropic: the system prompt at the top level, consecutive tool results merged into one
    /// `user` message of `tool_result` blocks; ids are those of the first message merged.
    fn anthropic(&self) -> Json {
        let mut system = None;
        let mut messages: Vec<Json> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let mut overrides = Map::new();
        let mut last_was_tool = false;
        for (i, t) in self.turns.iter().enumerate() {
            let is_tool = matches!(t, Turn::Tool { .. });
            match t {
                Turn::System(s) => {
                    system = Some(s.clone());
                    ids.push(Conversation::id(i));
                }
                Turn::Tool { call_id, text } => {
                    let block =
                        json!({"type": "tool_result", "tool_use_id": call_id, "content": text});
                    match messages.last_mut() {
                        Some(Json::Object(m)) if last_was_tool => {
                            if let Some(Json::Array(blocks)) = m.get_mut("content") {
                                blocks.push(block);
                            }
                        }
                        _ => {
                            messages.push(json!({"role": "user", "content": [block]}));
                            ids.push(Conversation::id(i));
                        }
                    }
                }
                other => {
                    let m = match other {
                        Turn::User(s) => json!({"role": "user", "content": s}),
                        // A summary is a user message: as an assistant message it would join
                        // the assistant turn after it (SPEC TRN-23).
                        Turn::Summary(s) => {
                            overrides.insert(ids.len().to_string(), json!("Summary"));
                            json!({"role": "user", "content": s})
                        }
                        Turn::Assistant { text, calls } if calls.is_empty() => {
                            json!({"role": "assistant", "content": text})
                        }
                        Turn::Assistant { text, calls } => {
                            let mut blocks = Vec::new();
                            if !text.is_empty() {
                                blocks.push(json!({"type": "text", "text": text}));
                            }
                            blocks.extend(calls.iter().map(|c| {
                                json!({"type": "tool_use", "id": c.id, "name": c.name,
                                       "input": c.arguments})
                            }));
                            json!({"role": "assistant", "content": blocks})
                        }
                        _ => unreachable!("system and tool turns are handled above"),
                    };
                    messages.push(m);
                    ids.push(Conversation::id(i));
                }
            }
            last_was_tool = is_tool;
        }
        json!({"format": "anthropic-messages", "system": system, "messages": messages,
               "ids": ids, "overrides": overrides})
    }
}
