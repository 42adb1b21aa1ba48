//! One key's settings walked across the levels: where each takes effect, the level warnings, the keys passed through.

use super::*;

/// OPT-004: the keys outside the twelve, at any level, sorted and each once: they pass through.
pub(super) fn passthrough(set: &ge_spec::vocab::Settings<'_>) -> Vec<String> {
    let passthrough: BTreeSet<&str> = set.others().iter().copied().collect();
    passthrough.into_iter().map(str::to_owned).collect()
}

/// OPT-002: the warning for a value set at a level where it has no effect (or, upstream, where
/// GE's lists leave it out).
pub(super) fn level_warning(key: OptionKey, level: Level, raw: &str) -> Diagnostic {
    Diagnostic::new("OPT-002", "")
        .key(key.as_str())
        .level(level)
        .value(raw)
}

/// What [`Reading::new`] gathers of one key, walking its levels from global to graph: the
/// makings of the strict outcome, what the text permits, and the key's diagnostics in the order
/// they are found.
pub(super) struct KeyWalk<'a> {
    /// The key's row.
    pub(super) row: &'a OptionSpec,
    /// Read under the upstream profile.
    pub(super) upstream: bool,
    /// The suite's choices that decide the strict outcome.
    pub(super) strict_because: Vec<String>,
    /// The value of the last level read without an error: meaning, level, warnings.
    pub(super) winner: Option<(Meaning, Level, Vec<Diagnostic>)>,
    /// Some level's value was refused.
    pub(super) rejected: bool,
    /// How many levels set the option where it is used.
    pub(super) listed_set: usize,
    /// The outcomes the text permits.
    pub(super) permitted: Permitted,
    /// Some level where the option is used holds a value the text allows whole.
    pub(super) any_valid_listed: bool,
    /// See [`KeyReading::gray`].
    pub(super) gray: BTreeMap<Level, String>,
    /// See [`KeyReading::partial`].
    pub(super) partial: Option<String>,
    /// See [`KeyReading::unlisted`].
    pub(super) unlisted: bool,
    /// The strict errors.
    pub(super) errors: Vec<Diagnostic>,
    /// The strict warnings.
    pub(super) warnings: Vec<Diagnostic>,
    /// The warnings a MAY clause permits.
    pub(super) optional_warnings: Vec<Diagnostic>,
}

impl<'a> KeyWalk<'a> {
    pub(super) fn new(row: &'a OptionSpec, upstream: bool) -> Self {
        KeyWalk {
            row,
            upstream,
            strict_because: Vec::new(),
            winner: None,
            rejected: false,
            listed_set: 0,
            permitted: Permitted {
                accepted: Vec::new(),
                any_from: Vec::new(),
                subsets: Vec::new(),
                rejected: false,
                strict_only: upstream,
            },
            any_valid_listed: false,
            gray: BTreeMap::new(),
            partial: None,
            unlisted: false,
            errors: Vec::new(),
            warnings: Vec::new(),
            optional_warnings: Vec::new(),
        }
    }

    /// The value `raw` set at `level`, through each step in turn: the level advice, whether the
    /// level uses it, how the text classes it, how the suite (or GE) reads it.
    pub(super) fn level(&mut self, level: Level, raw: &str, maps: &OptionMaps, ctx: Context) {
        self.batch_copy_advice(level);
        if !self.used_at(level, raw) {
            return;
        }
        self.listed_set += 1;
        match classify(self.row, raw, ctx) {
            Class::Valid(meanings) => self.valid(level, meanings),
            Class::Gray { readings, why } => self.gray(level, readings, why),
            Class::Invalid => self.invalid(),
        }
        self.parse(level, raw, maps, ctx);
    }

    /// IBC-006: the text advises against setting inputBatchCpy at the global or graph level;
    /// an engine may say so (an optional warning).
    pub(super) fn batch_copy_advice(&mut self, level: Level) {
        let key = self.row.key;
        if key == OptionKey::InputBatchCpy && level != Level::Session {
            self.optional_warnings.push(
                Diagnostic::new("IBC-006", "")
                    .key(key.as_str())
                    .level(level),
            );
        }
    }

    /// OPT-002 and OPT-010's upstream entry: a value set where the option does not take effect
    /// is ignored with a warning (upstream: used with one, but for the two index lists, whose
    /// session value GE drops without a word). Returns whether the value goes on to be read.
    pub(super) fn used_at(&mut self, level: Level, raw: &str) -> bool {
        let key = self.row.key;
        let listed = self.row.takes_effect_at(level);
        let used = listed || (self.upstream && upstream_uses(key));
        let warns_upstream = self.upstream
            && used
            && ((!listed && key != OptionKey::AtomicCleanPolicy)
                || key == OptionKey::ExternalWeightDir);
        if !used && self.upstream && level == Level::Session {
            // OPT-010 upstream: GE's session list names the two index lists, so a
            // session value is dropped without a word.
            return false;
        }
        if !used {
            // OPT-002: ignored, with a warning; the text only says it has no effect.
            self.warnings.push(level_warning(key, level, raw));
            self.strict_because.push("OPT-002".into());
            self.permitted.rejected = true;
            self.unlisted = true;
            return false;
        }
        if warns_upstream {
            self.warnings.push(level_warning(key, level, raw));
        }
        true
    }

    /// IRM-005 / ORM-005, and OPT-005 for pairs: a value the text allows takes effect. Where the
    /// text voids some indexes or pairs, the suite drops only them (IRM-005, ORM-005) or, for
    /// pairs, rejects the option (OPT-005).
    pub(super) fn valid(&mut self, level: Level, meanings: Vec<Meaning>) {
        let key = self.row.key;
        // A value the text voids in part may be ignored whole, like one it voids (the next
        // level's value or the default then in force).
        self.any_valid_listed |= meanings.len() == 1;
        if meanings.len() > 1 {
            let why = match self.row.grammar {
                Grammar::IndexList => clause(key, 5),
                _ => "OPT-005".to_owned(),
            };
            self.strict_because.push(why.clone());
            // Whether the index alone or the whole option goes is not said by the text
            // (IRM-005, ORM-005): refusing the list is allowed too.
            if self.row.grammar == Grammar::IndexList {
                self.permitted.rejected = true;
            }
            self.partial = Some(why);
        }
        for m in meanings {
            self.permitted.accepted.push((m, level.into()));
        }
    }

    /// OPT-005 and the clause `why` that settles a spelling or form the text leaves open
    /// (OPT-003, IRM-004, ORI-004, EWD-004, ...): any of `readings` may take effect (any subset
    /// of a list's, any allowed value of another grammar), or none.
    pub(super) fn gray(&mut self, level: Level, readings: Vec<Meaning>, why: String) {
        self.gray.insert(level, why.clone());
        self.strict_because.push(why);
        self.strict_because.push("OPT-005".into());
        self.permitted.rejected = true;
        match self.row.grammar {
            Grammar::IndexList | Grammar::PairList => {
                if let Some(all) = readings.first() {
                    self.permitted.subsets.push((all.clone(), level));
                }
            }
            _ => self.permitted.any_from.push(level),
        }
        for m in readings {
            self.permitted.accepted.push((m, level.into()));
        }
    }

    /// OPT-005: a value the text rules out rejects the option.
    pub(super) fn invalid(&mut self) {
        self.strict_because.push("OPT-005".into());
        self.permitted.rejected = true;
    }

    /// OPT-003, the value clauses (ACP-001, ...) and the list clauses (IRM-003, IRM-004,
    /// ORI-003, ...), as [`parse_strict`] reads them (upstream [`parse_upstream`], for a value GE
    /// reads at all): a value read wins over an earlier level's; a refused one is an error and
    /// rejects the key.
    pub(super) fn parse(&mut self, level: Level, raw: &str, maps: &OptionMaps, ctx: Context) {
        if self.upstream && !upstream_reads(self.row.key, level, maps) {
            return;
        }
        let parsed = if self.upstream {
            parse_upstream(self.row, level, raw, ctx)
        } else {
            parse_strict(self.row, level, raw, ctx)
        };
        match parsed {
            Ok((m, w)) => self.winner = Some((m, level, w)),
            Err(e) => {
                self.errors.push(e);
                self.rejected = true;
            }
        }
    }

    /// The key's reading once every level is walked; its diagnostics are added to `reading`'s.
    pub(super) fn finish(mut self, reading: &mut Reading) -> KeyReading {
        self.precedence();
        self.default_permitted();
        let strict = self.strict_outcome();
        self.canonical_because();
        reading.errors.append(&mut self.errors);
        reading.warnings.append(&mut self.warnings);
        reading
            .optional_warnings
            .append(&mut self.optional_warnings);
        KeyReading {
            key: self.row.key,
            strict,
            strict_because: self.strict_because,
            permitted: self.permitted,
            gray: self.gray,
            partial: self.partial,
            unlisted: self.unlisted,
            restricted: false,
        }
    }

    /// OPT-001: where more than one level sets the option where it is used, precedence decides.
    pub(super) fn precedence(&mut self) {
        if self.listed_set > 1 {
            self.strict_because.push("OPT-001".into());
        }
    }

    /// OPT-006: unless some level holds a value the text allows whole, the default may be in
    /// force (every value set may be ignored).
    pub(super) fn default_permitted(&mut self) {
        if !self.any_valid_listed {
            self.permitted
                .accepted
                .push((default_meaning(self.row), Source::Default));
        }
    }

    /// OPT-005 and OPT-006: the strict outcome: rejected when some value was refused; else the
    /// value of the last level read, whose warnings are given; else the default.
    pub(super) fn strict_outcome(&mut self) -> Outcome {
        if self.rejected {
            return Outcome::Rejected;
        }
        match self.winner.take() {
            Some((m, level, w)) => {
                self.warnings.extend(w);
                Outcome::Accepted(m, level.into())
            }
            None => Outcome::Accepted(default_meaning(self.row), Source::Default),
        }
    }

    /// OPT-007: the canonical spelling is a choice behind every strict outcome; the choices
    /// sorted, each once.
    pub(super) fn canonical_because(&mut self) {
        self.strict_because.push("OPT-007".into());
        self.strict_because.sort_unstable();
        self.strict_because.dedup();
    }
}
