//! A running update, followed through its journal: the engine appends a durable line as each
//! provider operation begins and ends (the same lines that recover an interrupted deployment),
//! so the console sees an `up` or `destroy` in progress on any backend without the deployment
//! doing anything for it.
//!
//! # A running update is followed through its journal
//!
//! The journal already records each provider operation's start and end durably, on both backends,
//! for recovery; the console reads it (parsing only the lines added since it last looked) rather
//! than the deployment publishing a second stream. A journal left by a killed deployment reads as
//! "in progress" until the next command recovers it, which the page says.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;
use serde_json::Value;

/// How many finished operations the live view lists.
const RECENT: usize = 30;
/// How many operations in flight it lists.
const IN_FLIGHT_SHOWN: usize = 50;

/// One provider operation of the running update.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LiveOperation {
    /// `creating`, `updating`, `deleting`, `reading`, `importing`.
    pub kind: String,
    pub urn: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    /// `running`, `done`, or `no-change` (ended without effect: failed, or nothing to do).
    pub state: &'static str,
}

/// What the journal says so far.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// A journal exists: a deployment is running (or was interrupted and awaits recovery).
    pub running: bool,
    /// When the deployment started (its base checkpoint's time, RFC 3339).
    pub base_time: Option<String>,
    /// Resources in the checkpoint the deployment started from.
    pub base_resources: Option<u64>,
    /// Operations begun, per kind.
    pub begun: BTreeMap<String, u64>,
    /// Operations ended, per kind.
    pub ended: BTreeMap<String, u64>,
    /// Operations begun and not yet ended (the first [`IN_FLIGHT_SHOWN`]).
    pub in_flight: Vec<LiveOperation>,
    pub in_flight_count: usize,
    /// The latest ended operations, newest first.
    pub recent: Vec<LiveOperation>,
    /// Lines of the journal that could not be read (a torn last line is not counted).
    pub unreadable_lines: u64,
}

/// Reads a journal as it grows: only the bytes added since the last look are parsed.
#[derive(Debug, Default)]
pub struct JournalFollower {
    /// The header line of the journal being followed (a new one means a new deployment).
    header: Option<Vec<u8>>,
    /// Bytes parsed so far (always at a line's end).
    offset: usize,
    begun: HashMap<u64, LiveOperation>,
    recent: VecDeque<LiveOperation>,
    progress: Progress,
}

impl JournalFollower {
    /// Takes the journal as it is now (`None`: there is none) and returns the progress.
    pub fn observe(&mut self, journal: Option<&[u8]>) -> &Progress {
        let Some(journal) = journal.filter(|j| !j.is_empty()) else {
            *self = JournalFollower::default();
            return &self.progress;
        };
        let header_end = journal.iter().position(|&b| b == b'\n');
        let header = header_end.map(|end| &journal[..end]);
        let same_journal = header.is_some() && header == self.header.as_deref();
        if !same_journal || journal.len() < self.offset {
            *self = JournalFollower::default();
            let Some(end) = header_end else {
                // The header itself is still being written.
                self.progress.running = true;
                return &self.progress;
            };
            self.header = Some(journal[..end].to_vec());
            self.read_header(&journal[..end]);
            self.offset = end + 1;
        }
        self.progress.running = true;
        let fresh = &journal[self.offset..];
        let complete = fresh.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for line in fresh[..complete].split(|&b| b == b'\n') {
            if !line.is_empty() {
                self.read_line(line);
            }
        }
        self.offset += complete;
        let mut in_flight: Vec<&LiveOperation> = self.begun.values().collect();
        in_flight.sort_by(|a, b| a.urn.cmp(&b.urn));
        self.progress.in_flight_count = in_flight.len();
        self.progress.in_flight = in_flight
            .into_iter()
            .take(IN_FLIGHT_SHOWN)
            .cloned()
            .collect();
        self.progress.recent = self.recent.iter().cloned().collect();
        &self.progress
    }

    fn read_header(&mut self, line: &[u8]) {
        let Ok(header) = serde_json::from_slice::<Value>(line) else {
            self.progress.unreadable_lines += 1;
            return;
        };
        let base = &header["base"];
        self.progress.base_time = base["time"].as_str().map(str::to_owned);
        self.progress.base_resources = base["resources"].as_u64();
    }

    fn read_line(&mut self, line: &[u8]) {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(line) else {
            self.progress.unreadable_lines += 1;
            return;
        };
        let seq = line.get("seq").and_then(Value::as_u64);
        if let (Some(seq), Some(kind)) = (seq, line.get("begin").and_then(Value::as_str)) {
            let resource = line.get("resource");
            let text = |key: &str| {
                resource
                    .and_then(|r| r.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            *self.progress.begun.entry(kind.to_owned()).or_default() += 1;
            self.begun.insert(
                seq,
                LiveOperation {
                    kind: kind.to_owned(),
                    urn: text("urn"),
                    resource_type: text("type"),
                    state: "running",
                },
            );
        } else if let Some(begun) = line.get("end").and_then(Value::as_u64) {
            let Some(mut operation) = self.begun.remove(&begun) else {
                return;
            };
            let effect = line
                .get("mutations")
                .and_then(Value::as_array)
                .is_some_and(|m| !m.is_empty());
            operation.state = if effect { "done" } else { "no-change" };
            *self
                .progress
                .ended
                .entry(operation.kind.clone())
                .or_default() += 1;
            self.recent.push_front(operation);
            self.recent.truncate(RECENT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"journal":1,"base":{"time":"2026-11-30T07:00:00Z","resources":3,"hash":"ab"},"manifest":{}}"#;

    fn begin(seq: u64, kind: &str, name: &str) -> String {
        format!(
            r#"{{"seq":{seq},"begin":"{kind}","resource":{{"urn":"urn:pulumi:dev::p::t:index:T::{name}","type":"t:index:T"}}}}"#
        )
    }

    #[test]
    fn follows_operations_as_lines_arrive() {
        let mut follower = JournalFollower::default();
        assert!(!follower.observe(None).running);
        let mut journal = format!(
            "{HEADER}\n{}\n{}\n",
            begin(1, "creating", "a"),
            begin(2, "deleting", "b")
        );
        let progress = follower.observe(Some(journal.as_bytes())).clone();
        assert!(progress.running);
        assert_eq!(progress.base_resources, Some(3));
        assert_eq!(progress.in_flight_count, 2);
        assert_eq!(progress.begun["creating"], 1);
        // `a` ends with an effect; `b`'s end is still being written (a torn line).
        journal.push_str(r#"{"seq":3,"end":1,"mutations":[{"append":{}}]}"#);
        journal.push_str("\n{\"seq\":4,\"end\":2,\"mut");
        let progress = follower.observe(Some(journal.as_bytes())).clone();
        assert_eq!(progress.in_flight_count, 1);
        assert_eq!(progress.recent.len(), 1);
        assert_eq!(progress.recent[0].state, "done");
        assert!(progress.recent[0].urn.ends_with("::a"));
        assert_eq!(progress.unreadable_lines, 0);
        journal.push_str("ations\":[]}\n");
        let progress = follower.observe(Some(journal.as_bytes())).clone();
        assert_eq!(progress.in_flight_count, 0);
        assert_eq!(progress.recent[0].state, "no-change");
        assert_eq!(progress.ended["deleting"], 1);
        // The journal is emptied at the end of the deployment.
        assert!(!follower.observe(None).running);
    }

    #[test]
    fn a_new_deployment_starts_over_and_garbage_is_counted_not_fatal() {
        let mut follower = JournalFollower::default();
        let one = format!("{HEADER}\n{}\n", begin(1, "creating", "a"));
        follower.observe(Some(one.as_bytes()));
        let other_header = HEADER.replace("\"ab\"", "\"cd\"");
        let two = format!("{other_header}\nnot json\n{}\n", begin(1, "updating", "z"));
        let progress = follower.observe(Some(two.as_bytes()));
        assert_eq!(progress.begun.get("creating"), None);
        assert_eq!(progress.begun["updating"], 1);
        assert_eq!(progress.unreadable_lines, 1);
    }
}
