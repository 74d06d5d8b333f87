//! The resources `--target`, `--exclude`, `--replace` and `--target-replace` name: literal URNs
//! and glob patterns, as Pulumi's `UrnTargets` (pkg/resource/deploy/deployment.go).
//!
//! A value containing `*` is a glob over the whole URN, anything else a URN. In a glob, `**`
//! matches any run of characters and `*` any run without a `:` (so it stays within one part of
//! a type, or within a name); every other character stands for itself — there is no escaping,
//! exactly as Pulumi builds its regular expression (`**` → `.*`, `*` → `[^:]*`, the rest
//! quoted, anchored at both ends; Go's `.` does not match a newline, and neither does `**`).

use crate::urn::{Urn, UrnError};

/// A value given to a flag that names resources, which is neither a URN nor a glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is neither a URN nor a pattern with `*` or `**`: {source}")]
pub struct TargetError {
    pub text: String,
    #[source]
    pub source: UrnError,
}

/// One value of a flag that names resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrnPattern {
    /// A URN, which must name a resource of the stack (or, for `up`, one the program
    /// registers).
    Literal(Urn),
    /// A glob, which may match any number of resources, none included.
    Glob(Glob),
}

impl UrnPattern {
    /// A glob if `text` contains `*`, else a URN (Pulumi performs no other URN check; Cairn
    /// parses the URN so that a typo is named at once).
    pub fn parse(text: &str) -> Result<UrnPattern, TargetError> {
        if text.contains('*') {
            return Ok(UrnPattern::Glob(Glob::new(text)));
        }
        Urn::parse(text)
            .map(UrnPattern::Literal)
            .map_err(|source| TargetError {
                text: text.to_owned(),
                source,
            })
    }

    pub fn matches(&self, urn: &Urn) -> bool {
        match self {
            UrnPattern::Literal(literal) => literal == urn,
            UrnPattern::Glob(glob) => glob.matches(urn.as_str()),
        }
    }
}

impl std::fmt::Display for UrnPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrnPattern::Literal(urn) => urn.fmt(f),
            UrnPattern::Glob(glob) => f.write_str(&glob.text),
        }
    }
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(String),
    /// `*`: any run of characters without `:`.
    Star,
    /// `**`: any run of characters without a newline.
    DoubleStar,
}

impl Glob {
    /// Compiles `text` as Pulumi does: split at `**`, then each piece at `*`.
    pub fn new(text: &str) -> Glob {
        let mut tokens = Vec::new();
        for (i, segment) in text.split("**").enumerate() {
            if i > 0 {
                tokens.push(Token::DoubleStar);
            }
            for (j, piece) in segment.split('*').enumerate() {
                if j > 0 {
                    tokens.push(Token::Star);
                }
                if !piece.is_empty() {
                    tokens.push(Token::Literal(piece.to_owned()));
                }
            }
        }
        Glob {
            text: text.to_owned(),
            tokens,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the whole of `text` matches. Linear in `text` per token (the set of positions
    /// reached so far), so no pattern can make it backtrack exponentially.
    pub fn matches(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut reached = vec![false; n + 1];
        reached[0] = true;
        for token in &self.tokens {
            let mut next = vec![false; n + 1];
            match token {
                Token::Literal(literal) => {
                    let literal = literal.as_bytes();
                    for p in (0..=n).filter(|&p| reached[p]) {
                        if bytes[p..].starts_with(literal) {
                            next[p + literal.len()] = true;
                        }
                    }
                }
                Token::Star | Token::DoubleStar => {
                    // Sweep forward: a position is reached if the run that got here can be
                    // extended over the previous byte. Positions inside a multi-byte character
                    // are reached too, but only a literal (whole characters) can follow from
                    // them, and no literal starts with a continuation byte.
                    let stop = if matches!(token, Token::Star) {
                        b':'
                    } else {
                        b'\n'
                    };
                    let mut running = false;
                    for p in 0..=n {
                        running = reached[p] || (running && bytes[p - 1] != stop);
                        next[p] = running;
                    }
                }
            }
            reached = next;
        }
        reached[n]
    }
}

/// The resources a flag names: literal URNs and globs. Empty: unconstrained (as Pulumi's zero
/// `UrnTargets`, it then contains every URN — callers ask [`UrnTargets::is_constrained`]
/// first where "none given" means "all").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrnTargets {
    patterns: Vec<UrnPattern>,
}

impl UrnTargets {
    /// Parses each value (see [`UrnPattern::parse`]).
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<UrnTargets, TargetError> {
        let patterns = values
            .iter()
            .map(|v| UrnPattern::parse(v.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(UrnTargets { patterns })
    }

    /// Whether any value was given.
    pub fn is_constrained(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// Whether a literal or a glob names `urn` (false when nothing was given: use
    /// [`UrnTargets::is_constrained`] for "all").
    pub fn contains(&self, urn: &Urn) -> bool {
        self.patterns.iter().any(|p| p.matches(urn))
    }

    /// The URNs given literally: those that must name resources.
    pub fn literals(&self) -> impl Iterator<Item = &Urn> {
        self.patterns.iter().filter_map(|p| match p {
            UrnPattern::Literal(urn) => Some(urn),
            UrnPattern::Glob(_) => None,
        })
    }

    pub fn patterns(&self) -> &[UrnPattern] {
        &self.patterns
    }

    /// Adds a URN (unless something given already names it).
    pub fn add(&mut self, urn: Urn) {
        if !self.contains(&urn) {
            self.patterns.push(UrnPattern::Literal(urn));
        }
    }
}

impl From<Vec<Urn>> for UrnTargets {
    fn from(urns: Vec<Urn>) -> UrnTargets {
        UrnTargets {
            patterns: urns.into_iter().map(UrnPattern::Literal).collect(),
        }
    }
}

impl FromIterator<UrnPattern> for UrnTargets {
    fn from_iter<I: IntoIterator<Item = UrnPattern>>(iter: I) -> UrnTargets {
        UrnTargets {
            patterns: iter.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUCKET: &str = "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::logs";
    const NESTED: &str = "urn:pulumi:dev::proj::my:mod:Site$aws:s3/bucket:Bucket::site-logs";
    const PROVIDER: &str = "urn:pulumi:dev::proj::pulumi:providers:aws::default_6_0_0";

    /// Each glob against each URN: the regular expression Pulumi builds from it
    /// (`getMatcher`), evaluated by hand, says whether it matches.
    #[test]
    fn globs_match_as_pulumis_regular_expressions_do() {
        let cases: &[(&str, &str, bool)] = &[
            // `**` spans parts and `::`.
            ("**Bucket**", BUCKET, true),
            ("**Bucket**", NESTED, true),
            ("**Bucket**", PROVIDER, false),
            ("**logs", BUCKET, true),
            ("**", PROVIDER, true),
            ("urn:pulumi:dev::proj::**", NESTED, true),
            ("urn:pulumi:prod::proj::**", BUCKET, false),
            // Anchored at both ends.
            ("**Bucket", BUCKET, false),
            ("Bucket**", BUCKET, false),
            // `*` stays between colons.
            (
                "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::*",
                BUCKET,
                true,
            ),
            ("urn:pulumi:dev::proj::aws:*:Bucket::logs", BUCKET, true),
            ("urn:pulumi:dev::proj::*::logs", BUCKET, false),
            ("urn:pulumi:*::proj::**", BUCKET, true),
            ("*", BUCKET, false),
            ("**::*logs", NESTED, true),
            ("**::*logs", BUCKET, true),
            ("**::site-*", NESTED, true),
            ("**::site-*", BUCKET, false),
            // `***` is `**` then `*` (Pulumi splits at `**` first): `.*[^:]*`.
            ("***logs", BUCKET, true),
            ("urn:pulumi:dev::proj::***", BUCKET, true),
            // `$` (a nested type's separator), `.` and `/` stand for themselves.
            ("**Site$aws**", NESTED, true),
            ("**Site.aws**", NESTED, false),
            ("**s3.bucket**", BUCKET, false),
            ("**s3/bucket**", BUCKET, true),
            // Case matters.
            ("**bucket:bucket**", BUCKET, false),
            // A literal made of the whole URN as a glob of one `*` at the end.
            (
                "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::log*",
                BUCKET,
                true,
            ),
            (
                "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::logs*",
                BUCKET,
                true,
            ),
            (
                "urn:pulumi:dev::proj::aws:s3/bucket:Bucket::logsx*",
                BUCKET,
                false,
            ),
        ];
        for &(glob, urn, expected) in cases {
            let urn = Urn::parse(urn).unwrap();
            assert_eq!(
                UrnPattern::parse(glob).unwrap().matches(&urn),
                expected,
                "{glob} against {urn}"
            );
        }
    }

    #[test]
    fn star_and_double_star_differ_on_colons_and_newlines_only() {
        assert!(Glob::new("a*b").matches("a-xé-b"));
        assert!(!Glob::new("a*b").matches("a:b"));
        assert!(Glob::new("a**b").matches("a::b"));
        assert!(!Glob::new("a**b").matches("a\nb"));
        assert!(Glob::new("a*b").matches("a\nb"));
        assert!(Glob::new("é*").matches("éé"));
        assert!(Glob::new("*é").matches("aé"));
        assert!(Glob::new("").matches(""));
        assert!(!Glob::new("").matches("a"));
        assert!(Glob::new("**").matches(""));
    }

    /// Many stars against a long text that almost matches: a backtracking matcher would take
    /// forever.
    #[test]
    fn matching_never_backtracks() {
        let glob = Glob::new(&"a**".repeat(30));
        let text = "a".repeat(20_000);
        assert!(!Glob::new(&format!("{}b", "a**".repeat(30))).matches(&text));
        assert!(glob.matches(&text));
    }

    #[test]
    fn values_without_a_star_are_urns() {
        let targets = UrnTargets::parse(&[BUCKET, "**Bucket**"]).unwrap();
        assert!(targets.is_constrained());
        assert_eq!(
            targets.literals().map(Urn::as_str).collect::<Vec<_>>(),
            [BUCKET]
        );
        assert!(targets.contains(&Urn::parse(NESTED).unwrap()));
        assert!(!targets.contains(&Urn::parse(PROVIDER).unwrap()));
        let bad = UrnTargets::parse(&["urn:pulumi:dev::nope"]).unwrap_err();
        assert_eq!(bad.text, "urn:pulumi:dev::nope");
        assert!(!UrnTargets::default().is_constrained());
        assert!(!UrnTargets::default().contains(&Urn::parse(BUCKET).unwrap()));
    }

    #[test]
    fn adding_a_urn_already_named_keeps_one() {
        let mut targets = UrnTargets::parse(&["**Bucket**"]).unwrap();
        targets.add(Urn::parse(BUCKET).unwrap());
        assert_eq!(targets.patterns().len(), 1);
        targets.add(Urn::parse(PROVIDER).unwrap());
        assert_eq!(targets.literals().count(), 1);
    }
}
