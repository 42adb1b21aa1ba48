//! The script replayed under the clauses: what each step must allocate, free and refresh, met against the engine's trace.

use super::*;

/// The replay of a script under the clauses: the session model's state as it goes, and what it
/// leaves for the checks (each step's entries, the refresh results, the refusals).
pub(super) struct Replay<'a> {
    pub(super) profile: Profile,
    /// `GE_USE_STATIC_MEMORY`.
    pub(super) env: Option<&'a str>,
    /// The policy the session's reading gives (SMP-015).
    pub(super) session_policy: u8,
    /// A rejected option is one load's refusal ([`refused_per_graph`]).
    pub(super) per_graph: bool,
    pub(super) model: Model,
    pub(super) wants: Vec<StepWants>,
    /// (step, graph, ok, clause deciding it)
    pub(super) refreshes: Vec<(u32, u32, bool, &'static str)>,
    /// (step, clause) of every refusal the clauses call for
    pub(super) refusals: BTreeMap<u32, &'static str>,
    /// Upstream: the options' refusals of the loads GE refuses one by one, required and
    /// optional (SES-017).
    pub(super) load_errors: (Vec<Diagnostic>, Vec<Diagnostic>),
    /// Upstream: the graphs GE added but could not build (SES-017).
    pub(super) unbuilt: BTreeSet<u32>,
    /// Upstream: some load is refused on its options (SES-017).
    pub(super) options_refused: bool,
    /// The engine's pools found smaller than a loaded user's need ([`EnginePools::check_cover`]).
    pub(super) short: Vec<Violation>,
}

impl<'a> Replay<'a> {
    /// Replays `scenario` step by step, the documented pools taking the engine's sizes before
    /// each step ([`EnginePools`]), then the end of the script.
    pub(super) fn run(
        profile: Profile,
        scenario: &'a SessionScenario,
        obs: &SessionObservation,
        (_, loads, session_alt, load_alts): Chosen<'_>,
        per_graph: bool,
    ) -> Self {
        let env = scenario.ge_use_static_memory.as_deref();
        let session_policy = u8::try_from(session_alt.values.static_memory_policy).unwrap_or(0);
        let (policy, env_decides) = pools_policy(profile, session_policy, env);
        let mut replay = Replay {
            profile,
            env,
            session_policy,
            per_graph,
            model: Model {
                profile,
                policy,
                env_decides,
                graphs: BTreeMap::new(),
                pools: BTreeMap::new(),
            },
            wants: Vec::new(),
            refreshes: Vec::new(),
            refusals: BTreeMap::new(),
            load_errors: Default::default(),
            unbuilt: BTreeSet::new(),
            options_refused: false,
            short: Vec::new(),
        };
        let mut engine = EnginePools::new(obs, &scenario.events);
        for (index, (event, res)) in scenario.events.iter().zip(load_alts).enumerate() {
            let step = index as u32;
            engine.adopt(step, &mut replay.model);
            let reading = loads.get(index).and_then(|r| r.as_deref());
            let values = res.as_ref().map_or(&session_alt.values, |a| &a.values);
            replay.event(step, event, reading, values);
        }
        let end = scenario.events.len() as u32;
        engine.adopt(end, &mut replay.model);
        replay.short = engine.short;
        replay.end(end);
        replay
    }

    /// One event of the script (`reading`, `values`: a load's options), recorded with what it
    /// calls for.
    pub(super) fn event(
        &mut self,
        step: u32,
        event: &SessionEvent,
        reading: Option<&Reading>,
        values: &Values,
    ) {
        let id = match event {
            SessionEvent::Load { graph, .. }
            | SessionEvent::Execute { graph, .. }
            | SessionEvent::Refresh { graph, .. }
            | SessionEvent::Unload { graph } => *graph,
        };
        // The event's graph as it was before the event, or as the event made it.
        let mut known = Vec::with_capacity(1);
        if let Some(g) = self.model.graphs.get(&id) {
            known.push((id, g.clone()));
        }
        let mut w = Vec::new();
        let kind = match event {
            SessionEvent::Load {
                graph,
                shape,
                feature_bytes,
                io_bytes,
                ..
            } => {
                let g = (*shape, *feature_bytes, *io_bytes);
                self.load(step, *graph, g, reading, values, &mut w)
            }
            SessionEvent::Execute { graph, times } => self.execute(step, *graph, *times, &mut w),
            SessionEvent::Refresh { graph, bytes } => self.refresh(step, *graph, *bytes, &mut w),
            SessionEvent::Unload { graph } => self.unload(step, *graph, &mut w),
        };
        if let (true, Some(g)) = (known.is_empty(), self.model.graphs.get(&id)) {
            known.push((id, g.clone()));
        }
        self.wants.push(StepWants {
            step,
            kind,
            known,
            want: w,
        });
    }

    /// SES-017, SES-012: the load of graph `id` of (shape, feature bytes, I/O bytes) `g`:
    /// upstream refused on its options ([`refused_by_options`]); refused when `id` is loaded;
    /// otherwise the memory it takes ([`Model::load`]).
    pub(super) fn load(
        &mut self,
        step: u32,
        id: u32,
        g: (ShapeKind, u64, u64),
        reading: Option<&Reading>,
        values: &Values,
        w: &mut Vec<Want>,
    ) -> StepKind {
        if self.per_graph
            && refused_by_options(
                id,
                reading,
                &self.model,
                &mut self.unbuilt,
                &mut self.load_errors,
            )
        {
            self.options_refused = true;
            StepKind::OptionsRefused
        } else if self.model.graphs.contains_key(&id) {
            self.refusals.insert(step, "SES-012");
            StepKind::Refused
        } else {
            let (shape, feature, io) = g;
            let graph = self.graph(shape, feature, io, values);
            self.model.load(id, graph, w);
            StepKind::Load(id)
        }
    }

    /// SMP-015, SMP-016, RZC-010..RZC-013: a graph of `shape` loaded with the options `values`.
    /// Its pools follow the session's policy, upstream the graph's own resolution (graph level
    /// first) as GE reads it while it loads the graph, `GE_USE_STATIC_MEMORY` combined; its
    /// I/O bytes go where [`io_of`] puts them.
    pub(super) fn graph(&self, shape: ShapeKind, feature: u64, io: u64, values: &Values) -> Graph {
        let own = match self.profile {
            Profile::Documented => self.session_policy,
            Profile::Upstream => u8::try_from(values.static_memory_policy).unwrap_or(0),
        };
        let (policy, env_decides) = pools_policy(self.profile, own, self.env);
        let graph_decides = pooled(policy, shape) != pooled(self.model.policy, shape);
        Graph {
            shape,
            policy,
            env_decides,
            graph_decides,
            feature,
            io,
            io_at: io_of(self.profile, shape, values.reuse_zero_copy),
            reuse_value: values.reuse_zero_copy,
            refreshable: values.feature_base_refreshable,
            base_set: false,
            released: false,
        }
    }

    /// SES-012, RZC-010, RZC-011, RZC-012: `times` executions of graph `id`: refused when it is
    /// not loaded; each takes and releases its I/O memory where that lives per execution.
    pub(super) fn execute(
        &mut self,
        step: u32,
        id: u32,
        times: u32,
        w: &mut Vec<Want>,
    ) -> StepKind {
        let Some(g) = self.model.graphs.get(&id) else {
            self.refusals.insert(step, "SES-012");
            return StepKind::Refused;
        };
        // No I/O bytes, no entries ([`Model::want`]): the block is not even named.
        if g.io_at == Io::Run && g.io > 0 {
            // Upstream a dynamic-shape graph with `1` still takes its I/O memory per execution:
            // the value is never read there (RZC-012 upstream).
            let clause = if g.reuse_value { "RZC-012" } else { "RZC-010" };
            let block = format!("graph-{id}/io");
            for _ in 0..times {
                Model::want(w, TraceAction::Alloc, block.clone(), g.io, clause);
                Model::want(
                    w,
                    TraceAction::Free,
                    block.clone(),
                    g.io,
                    if g.reuse_value { "RZC-012" } else { "RZC-011" },
                );
            }
        }
        StepKind::Execute(id)
    }

    /// SES-012, SES-018, FBR-010..FBR-014: a refresh of graph `id` with `bytes`: its result as
    /// decided ([`refresh_decision`]; refused when the graph is not loaded), the refusal due
    /// when refused; accepted upstream, it gives back the feature memory ([`Model::release`]).
    pub(super) fn refresh(
        &mut self,
        step: u32,
        id: u32,
        bytes: u64,
        w: &mut Vec<Want>,
    ) -> StepKind {
        let profile = self.profile;
        // (accepted, the clause deciding the result, the clause the refusal names)
        let (ok, clause, refusal) = match self.model.graphs.get_mut(&id) {
            None => (false, "SES-012", "SES-012"),
            Some(g) => refresh_decision(profile, g, bytes),
        };
        if !ok {
            self.refusals.insert(step, refusal);
        } else if profile == Profile::Upstream {
            self.model.release(id, w);
        }
        self.refreshes.push((step, id, ok, clause));
        StepKind::Refresh
    }

    /// SES-017, SES-012: the unload of graph `id`: upstream, of a graph added and left unbuilt,
    /// it succeeds and frees nothing; of a loaded graph, it gives back its memory
    /// ([`Model::unload`]); otherwise it is refused.
    pub(super) fn unload(&mut self, step: u32, id: u32, w: &mut Vec<Want>) -> StepKind {
        if self.unbuilt.remove(&id) {
            StepKind::OptionsRefused
        } else if self.model.graphs.contains_key(&id) {
            self.model.unload(id, w);
            StepKind::Unload(id)
        } else {
            self.refusals.insert(step, "SES-012");
            StepKind::Refused
        }
    }

    /// SES-011: the end of the script (step `end`) unloads what is still loaded, in ascending id
    /// order.
    pub(super) fn end(&mut self, end: u32) {
        let before = self.model.graphs.clone();
        let mut w = Vec::new();
        for id in before.keys().copied().collect::<Vec<_>>() {
            self.model.unload(id, &mut w);
        }
        // That the session's end unloads what is still loaded is the suite's model of a script
        // (SES-011): the text's clauses speak of unloads, and the script has none here.
        for want in &mut w {
            want.clause = "SES-011";
        }
        self.wants.push(StepWants {
            step: end,
            kind: StepKind::End,
            known: before.into_iter().collect(),
            want: w,
        });
    }
}

/// FBR-010..FBR-014: whether a refresh with `bytes` of the loaded graph `g` is accepted, the
/// clause deciding it and the clause its refusal names. The graph's base is then set
/// (documented), or its first update tried (upstream).
pub(super) fn refresh_decision(
    profile: Profile,
    g: &mut Graph,
    bytes: u64,
) -> (bool, &'static str, &'static str) {
    // FBR-014 upstream: a dynamic-shape graph refuses every update, before the size or the
    // option is looked at.
    if profile == Profile::Upstream && g.shape == ShapeKind::Dynamic {
        return (false, "FBR-014", "FBR-014");
    }
    if bytes < g.feature {
        return (false, "FBR-013", "FBR-013");
    }
    let refreshable = g.refreshable && g.shape == ShapeKind::Static;
    let decision = match (refreshable, g.base_set, g.shape, profile) {
        (true, _, _, _) => (true, "FBR-010", ""),
        // FBR-012 upstream: once loaded, every update is refused, the first included; it is the
        // first that departs.
        (false, false, _, Profile::Upstream) => (false, "FBR-012", "FBR-011"),
        (false, false, _, Profile::Documented) => (true, "FBR-012", ""),
        (false, true, ShapeKind::Static, _) => (false, "FBR-011", "FBR-011"),
        (false, true, ShapeKind::Dynamic, _) => (false, "FBR-014", "FBR-014"),
    };
    // Documented: the base is set; upstream: the first update was tried.
    g.base_set = true;
    decision
}
