//! The oracle's reading of a scenario: each key's permitted outcomes, the combinations of readings the text leaves open, the values in force.

use super::*;

impl Reading {
    /// Reads `maps` in `ctx` under `profile` against the embedded tables.
    pub fn new(profile: Profile, maps: &OptionMaps, ctx: Context) -> Reading {
        let spec = Spec::embedded();
        let upstream = profile == Profile::Upstream;
        let set = maps.settings();
        let mut reading = Reading {
            profile,
            keys: Vec::with_capacity(OptionKey::ALL.len()),
            errors: Vec::new(),
            optional_errors: Vec::new(),
            warnings: Vec::new(),
            optional_warnings: Vec::new(),
            passthrough: passthrough(&set),
        };
        for key in OptionKey::ALL {
            let mut walk = KeyWalk::new(spec.option(key), upstream);
            for level in Level::ALL {
                if let Some(raw) = set.get(key, level) {
                    walk.level(level, raw, maps, ctx);
                }
            }
            let k = walk.finish(&mut reading);
            reading.keys.push(k);
        }
        if upstream {
            reading.first_failure();
        } else {
            // OPT-008 upstream: GE gives none of these warnings when options are set.
            reading.restriction_warnings(spec, ctx);
        }
        reading.errors.sort();
        reading.warnings.sort();
        reading
    }

    /// The errors a backend is expected to give: the strict ones, and those it may give.
    pub fn expected_errors(&self) -> Vec<Expected> {
        let mut e: Vec<Expected> = self.errors.iter().map(Expected::exact).collect();
        e.extend(self.optional_errors.iter().map(Expected::optional));
        e
    }

    /// The warnings a backend is expected to give: the strict ones, and those it may give.
    pub fn expected_warnings(&self) -> Vec<Expected> {
        let mut e: Vec<Expected> = self.warnings.iter().map(Expected::exact).collect();
        e.extend(self.optional_warnings.iter().map(Expected::optional));
        e
    }

    /// OPT-011 upstream: GE checks in a fixed order and returns at the first failure. The first
    /// refusal in that order is required; the later ones may be given (each is a refusal GE
    /// makes once the earlier value is mended); a level warning (OPT-002) is required only when
    /// GE reaches the step that gives it; any other warning comes after every check and may be
    /// given or not.
    pub(super) fn first_failure(&mut self) {
        let Some(first) = self.errors.iter().map(ge_order).min() else {
            return;
        };
        let mut errors = std::mem::take(&mut self.errors);
        errors.sort_by_key(ge_order);
        let later = errors.split_off(1);
        self.errors = errors;
        self.optional_errors = later;
        let (keep, optional): (Vec<_>, Vec<_>) = std::mem::take(&mut self.warnings)
            .into_iter()
            .partition(|w| {
                w.clause == "OPT-002" && w.level.is_some_and(|l| step_of_level(l) <= first.0)
            });
        self.warnings = keep;
        self.optional_warnings.extend(optional);
    }

    /// OPT-008: an explicitly set value other than the default, whose condition outside the
    /// maps is not met, stays in force and draws a warning citing the restriction's clause.
    /// The text says only that the value does not take effect there, so refusing it is
    /// permitted too (a departure from OPT-008).
    pub(super) fn restriction_warnings(&mut self, spec: &Spec, ctx: Context) {
        let mut out: Vec<Diagnostic> = Vec::new();
        for k in &self.keys {
            let key = &k.key;
            let row = spec.option(*key);
            let Outcome::Accepted(m, from) = &k.strict else {
                continue;
            };
            let level = match from {
                Source::Default => continue,
                Source::Global => Level::Global,
                Source::Session => Level::Session,
                Source::Graph => Level::Graph,
            };
            if *m == default_meaning(row) {
                continue;
            }
            for what in self.unmet_restrictions(spec, row, ctx) {
                let Some(clause) = restriction_clause(*key, what) else {
                    continue;
                };
                out.push(
                    Diagnostic::new(clause, "")
                        .key(key.as_str())
                        .level(level)
                        .value(m.canonical()),
                );
            }
        }
        self.mark_restricted(&out);
        self.warnings.extend(out);
    }

    /// OPT-008: the restrictions of `row` outside the maps that `ctx` (or, for a companion
    /// option, the strict reading) does not meet, by field name.
    pub(super) fn unmet_restrictions(
        &self,
        spec: &Spec,
        row: &OptionSpec,
        ctx: Context,
    ) -> Vec<&'static str> {
        let r = &row.restrictions;
        let mut unmet = Vec::new();
        if r.run_mode.is_some_and(|mode| mode != ctx.run_mode) {
            unmet.push("run_mode");
        }
        if r.shape.is_some_and(|shape| shape != ctx.shape) {
            unmet.push("shape");
        }
        if !r.products.is_empty() && !r.products.contains(&ctx.product) {
            unmet.push("products");
        }
        if let (Some(min), Some(inputs)) = (r.min_inputs, ctx.inputs) {
            if inputs < min {
                unmet.push("min_inputs");
            }
        }
        if let Some(dep) = r.depends_on {
            if let Some(Outcome::Accepted(dm, _)) = self.key(dep).map(|d| &d.strict) {
                if *dm == default_meaning(spec.option(dep)) {
                    unmet.push("depends_on");
                }
            }
        }
        unmet
    }

    /// OPT-008: a key whose value drew a restriction warning in `out` may be refused as well
    /// as kept in force.
    pub(super) fn mark_restricted(&mut self, out: &[Diagnostic]) {
        for w in out {
            let key = w.key.as_deref().and_then(|k| k.parse::<OptionKey>().ok());
            if let Some(k) = key.and_then(|k| self.key_mut(k)) {
                k.restricted = true;
                k.permitted.rejected = true;
                k.strict_because.push("OPT-008".into());
                k.strict_because.sort_unstable();
                k.strict_because.dedup();
            }
        }
    }

    /// The suite's choice a refusal of the whole request departs from, when the text leaves the
    /// request open to one: some option is set at a level where it does not take effect. The
    /// text says where each option takes effect and nothing of what a setting elsewhere does to
    /// the request; the suite ignores it with a warning (OPT-002), and an engine may as well
    /// refuse the plan, the trace or the load that carries it. `None` under the upstream profile
    /// (GE's behaviour is one answer) and when every setting is where its option takes effect:
    /// a refusal there has no reason the text allows, and is judged as the empty answer it is.
    /// Every capability that allows a refusal takes its departure from here.
    pub fn refusal_reason(&self) -> Option<Violation> {
        (self.profile == Profile::Documented && self.keys.iter().any(|k| k.unlisted)).then(|| {
            Violation::new(
                "OPT-002",
                "the request is refused over a setting at a level where its option does not take effect",
            )
        })
    }

    /// What the reading knows of `key`.
    pub fn key(&self, key: OptionKey) -> Option<&KeyReading> {
        self.keys.iter().find(|r| r.key == key)
    }

    fn key_mut(&mut self, key: OptionKey) -> Option<&mut KeyReading> {
        self.keys.iter_mut().find(|r| r.key == key)
    }

    /// True when some key is rejected in the strict reading.
    pub fn rejected(&self) -> bool {
        self.keys.iter().any(|k| k.strict == Outcome::Rejected)
    }

    /// The strict values in force.
    pub fn values(&self) -> Values {
        values_of(|k| self.key(k)?.strict_ref())
    }

    /// The strict outcome of every key as a meaning (`None`: rejected).
    pub(super) fn strict_outcomes(&self) -> BTreeMap<OptionKey, Option<Meaning>> {
        self.keys
            .iter()
            .map(|r| (r.key, r.strict_meaning()))
            .collect()
    }

    /// The strict reading alone, the first of [`Reading::alternatives`]: most answers are judged
    /// by it only, so the others are worked out only when it finds something binding broken.
    pub fn strict(&self) -> Alternative {
        Alternative {
            values: self.values(),
            rejected: self.rejected(),
            departs: Vec::new(),
        }
    }

    /// The readings of the options the text allows, the strict one first, each with the suite's
    /// choices it departs from: every combination of the permitted outcomes of `keys` (the keys
    /// a capability acts on), up to a cap. With `planned` (the observation acted on the
    /// options), readings that reject a key are left out: a rejection explains no plan.
    pub fn alternatives(&self, keys: &[OptionKey], planned: bool) -> Vec<Alternative> {
        let strict = self.strict();
        if self.profile == Profile::Upstream {
            return vec![strict];
        }
        // Per key: the outcomes to try, each with what it departs from.
        let choices: Vec<(OptionKey, Vec<Choice>)> = keys
            .iter()
            .filter_map(|key| Some((*key, self.key(*key)?.choices(planned))))
            .collect();
        let strict_outcomes = self.strict_outcomes();
        let mut out = vec![strict];
        for combo in combinations(&choices) {
            if combo.iter().all(|&i| i == 0) {
                continue;
            }
            let Some(alt) = alternative(strict_outcomes.clone(), &choices, &combo, planned) else {
                continue;
            };
            out.push(alt);
            if out.len() >= MAX_ALTERNATIVES {
                break;
            }
        }
        out
    }
}

/// Every combination of one choice per key (indexes into each key's choices), the strict
/// choices first, up to a cap.
pub(super) fn combinations(choices: &[(OptionKey, Vec<Choice>)]) -> Vec<Vec<usize>> {
    let mut combos: Vec<Vec<usize>> = vec![vec![]];
    for (_, opts) in choices {
        let mut next = Vec::new();
        for c in &combos {
            for i in 0..opts.len() {
                let mut c = c.clone();
                c.push(i);
                next.push(c);
                if next.len() > MAX_ALTERNATIVES {
                    break;
                }
            }
        }
        combos = next;
    }
    combos
}

/// OPT-005 (a reading that rejects a key explains no plan): the reading `combo` picks from
/// `choices`, on top of the strict `outcomes`, with the suite's choices it departs from
/// (`None`: it rejects a key, and the observation is `planned`).
pub(super) fn alternative(
    mut outcomes: BTreeMap<OptionKey, Option<Meaning>>,
    choices: &[(OptionKey, Vec<Choice>)],
    combo: &[usize],
    planned: bool,
) -> Option<Alternative> {
    let mut departs = Vec::new();
    for ((key, opts), &i) in choices.iter().zip(combo) {
        let (m, d) = &opts[i];
        outcomes.insert(*key, m.clone());
        departs.extend(d.iter().cloned());
    }
    departs.sort_unstable();
    departs.dedup();
    let rejected = outcomes.values().any(Option::is_none);
    if planned && rejected {
        return None;
    }
    Some(Alternative {
        values: values_of(|k| outcomes.get(&k)?.as_ref()),
        rejected,
        departs,
    })
}

/// IFS-003, IFS-004, IBC-003, IBC-004, IBC-005, FBR-003, EWD-003: the clause of `key`'s
/// restriction `what` (a field of its row's restrictions), if the tables name one.
pub(super) fn restriction_clause(key: OptionKey, what: &str) -> Option<&'static str> {
    Some(match (key, what) {
        (OptionKey::InputFusionSize, "run_mode") => "IFS-003",
        (OptionKey::InputFusionSize, "shape") => "IFS-004",
        (OptionKey::InputBatchCpy, "min_inputs") => "IBC-003",
        (OptionKey::InputBatchCpy, "products") => "IBC-004",
        (OptionKey::InputBatchCpy, "run_mode") => "IBC-005",
        (OptionKey::FeatureBaseRefreshable, "shape") => "FBR-003",
        (OptionKey::ExternalWeightDir, "depends_on") => "EWD-003",
        _ => return None,
    })
}

/// Typed values from meanings (`None`: rejected, the default holds).
pub(super) fn values_of<'m>(meaning: impl Fn(OptionKey) -> Option<&'m Meaning>) -> Values {
    // Not set, or rejected: the table's default holds.
    let num = |k: OptionKey| match meaning(k) {
        Some(Meaning::Number(n)) => *n,
        _ => Spec::embedded().option(k).default_number().unwrap_or(0),
    };
    let set = |k: OptionKey| match meaning(k) {
        Some(Meaning::Indexes(s)) => s.clone(),
        _ => BTreeSet::new(),
    };
    Values {
        separate_atomic_clean: num(OptionKey::AtomicCleanPolicy) == 1,
        disable_reuse: num(OptionKey::DisableReuseMemory) == 1,
        fusion_size: num(OptionKey::InputFusionSize),
        input_reuse: set(OptionKey::InputReuseMemIndexes),
        reuse_zero_copy: num(OptionKey::ReuseZeroCopyMemory) == 1,
        static_memory_policy: num(OptionKey::StaticMemoryPolicy),
        // A pair past 32 bits names no tensor (only upstream, where session and global values
        // are not range-checked, keeps one).
        output_reuse_input: match meaning(OptionKey::OutputReuseInputMemIndexes) {
            Some(Meaning::Pairs(p)) => p
                .iter()
                .filter(|(i, o)| u32::try_from(*i).is_ok() && u32::try_from(*o).is_ok())
                .copied()
                .collect(),
            _ => BTreeSet::new(),
        },
        output_reuse: set(OptionKey::OutputReuseMemIndexes),
        external_weight: num(OptionKey::ExternalWeight),
        // The system sees a path up to its first NUL byte (kept only upstream, EWD-004).
        external_weight_dir: match meaning(OptionKey::ExternalWeightDir) {
            Some(Meaning::Path(p)) => {
                let p = p.split('\0').next().unwrap_or_default();
                (!p.is_empty()).then(|| p.to_owned())
            }
            _ => None,
        },
        batch_copy: num(OptionKey::InputBatchCpy) == 1,
        feature_base_refreshable: num(OptionKey::FeatureBaseRefreshable) == 1,
    }
}

impl KeyReading {
    /// The strict outcome as a meaning (`None`: rejected).
    pub(super) fn strict_meaning(&self) -> Option<Meaning> {
        self.strict_ref().cloned()
    }

    /// The strict outcome's meaning, borrowed (`None`: rejected).
    fn strict_ref(&self) -> Option<&Meaning> {
        match &self.strict {
            Outcome::Accepted(m, _) => Some(m),
            Outcome::Rejected => None,
        }
    }

    /// OPT-005 (a rejection the text permits) and the suite's other choices that decided the
    /// strict outcome (`strict_because`, OPT-007 aside): the outcomes to try for this key, the
    /// strict one first, then each other permitted meaning and, unless `planned`, a permitted
    /// rejection, each departing from those choices.
    pub(super) fn choices(&self, planned: bool) -> Vec<Choice> {
        let strict_m = self.strict_meaning();
        let mut opts: Vec<Choice> = vec![(strict_m.clone(), Vec::new())];
        let departs: Vec<String> = self
            .strict_because
            .iter()
            .filter(|c| *c != "OPT-007")
            .cloned()
            .collect();
        for (m, _) in &self.permitted.accepted {
            if Some(m) != strict_m.as_ref() && !opts.iter().any(|(o, _)| o.as_ref() == Some(m)) {
                opts.push((Some(m.clone()), departs.clone()));
            }
        }
        if !planned && self.permitted.rejected && strict_m.is_some() {
            opts.push((None, departs.clone()));
        }
        opts
    }

    /// The suite's choices an outcome the text permits departs from, the strict one being `self`.
    pub(super) fn departures(&self, got: &Outcome) -> Vec<String> {
        let level_of = |s: &Source| match s {
            Source::Default => None,
            Source::Global => Some(Level::Global),
            Source::Session => Some(Level::Session),
            Source::Graph => Some(Level::Graph),
        };
        let gray = |s: &Source| level_of(s).and_then(|l| self.gray.get(&l).cloned());
        let mut out: Vec<String> = Vec::new();
        match (&self.strict, got) {
            (Outcome::Accepted(ms, fs), Outcome::Accepted(mg, fg)) => {
                if fs != fg {
                    // Another level won: precedence (OPT-001), or a fallback past a value the
                    // suite refuses.
                    out.push(if *fg == Source::Default {
                        "OPT-005".into()
                    } else {
                        "OPT-001".into()
                    });
                    out.extend(gray(fg));
                } else if ms != mg {
                    out.extend(gray(fg));
                    out.extend(self.partial.clone());
                }
            }
            (Outcome::Rejected, Outcome::Accepted(_, fg)) => {
                out.push("OPT-005".into());
                out.extend(gray(fg));
            }
            (Outcome::Accepted(..), Outcome::Rejected) => {
                if self.unlisted {
                    out.push("OPT-002".into());
                }
                if self.restricted {
                    out.push("OPT-008".into());
                }
                out.extend(self.partial.clone());
                out.extend(self.gray.values().cloned());
            }
            (Outcome::Rejected, Outcome::Rejected) => {}
        }
        if out.is_empty() {
            out.push("OPT-005".into());
        }
        out.sort();
        out.dedup();
        out
    }

    /// True when the text permits `outcome` for this key.
    pub(super) fn permits(&self, row: &OptionSpec, outcome: &Outcome) -> bool {
        if *outcome == self.strict {
            return true;
        }
        let p = &self.permitted;
        if p.strict_only {
            return false;
        }
        match outcome {
            Outcome::Rejected => p.rejected,
            Outcome::Accepted(m, from) => {
                if p.accepted.iter().any(|(pm, pf)| pm == m && pf == from) {
                    return true;
                }
                let level = match from {
                    Source::Default => return false,
                    Source::Global => Level::Global,
                    Source::Session => Level::Session,
                    Source::Graph => Level::Graph,
                };
                if p.any_from.contains(&level) && allowed(row, m) {
                    return true;
                }
                p.subsets.iter().any(|(all, l)| {
                    *l == level
                        && match (all, m) {
                            (Meaning::Indexes(a), Meaning::Indexes(s)) => s.is_subset(a),
                            (Meaning::Pairs(a), Meaning::Pairs(s)) => s.is_subset(a),
                            _ => false,
                        }
                })
            }
        }
    }
}
