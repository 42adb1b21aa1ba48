//! Removal shrinking: the first pass of a property's shrinking, before proptest simplifies any
//! value. A failing scenario loses whole option keys, events, tensors, inputs, constants,
//! setup steps and list items one at a time, each removal kept only when the failure is still
//! found in what is left, until no single removal keeps it.
//!
//! Why a pass of our own: proptest shrinks a tuple field by field, and each field to the end
//! (its removals, then every value inside it) before the next field's removals are tried. The
//! generators draw the option maps of three levels, the items and the context as such tuples,
//! so a property's shrink budget went to simplifying strings and regenerating flat-mapped
//! values of the first fields, and the removals of the later ones were never reached: junk
//! keys at graph level survived beside the one option a fault needs. Removing first, across
//! the whole scenario, is cheap (one judgement per element) and leaves nothing that the
//! failure does not need; the removals found are then replayed on every value proptest
//! proposes ([`Removal::apply_all`]), so value simplification never brings an element back.

use std::collections::BTreeMap;

use ge_spec::vocab::session::SessionEvent;
use ge_spec::{Level, OptionMaps, Scenario};

/// One element of a scenario to take out. Positions count in the scenario as it is when the
/// removal applies, so a list of removals replays in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// The option `key` at `level`.
    Key(Level, String),
    /// The option `key` of the graph-level map of the session load at `event`.
    LoadKey(usize, String),
    /// The item at a position of the scenario's list of events, tensors, inputs or constants.
    Item(usize),
    /// The step at a position of a weights scenario's setup.
    Setup(usize),
    /// A memory scenario's run-time addresses.
    Run,
    /// A graph input (`true`) or output (`false`) of a memory scenario, at an index: its
    /// tensor, its run-time address and its count go, the higher indexes move down one, and
    /// the index lists and pairs that name it follow (items naming it go, higher ones move
    /// down). A tensor of a graph's input or output cannot go alone: the graph would then lack
    /// the tensor of an index it declares.
    Port(bool, u32),
    /// The items `start..start + len` of the list value of `key` at `level` (`,` or `|`
    /// separated). Long lists lose halves, then quarters, down to single items, so a list of
    /// a thousand items shrinks in a few dozen judgements.
    ListItems(Level, String, usize, usize),
}

/// How many removable elements a scenario carries: what a counterexample's size is measured in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Option keys at every level, a session load's own map included.
    pub keys: usize,
    /// Events, tensors, inputs, constants or setup steps.
    pub items: usize,
}

impl Size {
    /// Keys and items together.
    pub fn total(self) -> usize {
        self.keys + self.items
    }
}

fn maps(s: &Scenario) -> &OptionMaps {
    match s {
        Scenario::Options(s) => &s.options,
        Scenario::Transfer(s) => &s.options,
        Scenario::Memory(s) => &s.options,
        Scenario::Session(s) => &s.options,
        Scenario::Weights(s) => &s.options,
    }
}

fn maps_mut(s: &mut Scenario) -> &mut OptionMaps {
    match s {
        Scenario::Options(s) => &mut s.options,
        Scenario::Transfer(s) => &mut s.options,
        Scenario::Memory(s) => &mut s.options,
        Scenario::Session(s) => &mut s.options,
        Scenario::Weights(s) => &mut s.options,
    }
}

fn load_map(event: &SessionEvent) -> Option<&BTreeMap<String, String>> {
    match event {
        SessionEvent::Load { options, .. } => options.as_ref(),
        _ => None,
    }
}

fn item_count(s: &Scenario) -> usize {
    match s {
        Scenario::Options(_) => 0,
        Scenario::Transfer(s) => s.inputs.len(),
        Scenario::Memory(s) => s.tensors.len(),
        Scenario::Session(s) => s.events.len(),
        Scenario::Weights(s) => s.constants.len() + s.setup.len(),
    }
}

/// The size of `scenario`.
pub fn size(scenario: &Scenario) -> Size {
    let m = maps(scenario);
    let mut keys = m.global.len() + m.session.len() + m.graph.len();
    if let Scenario::Session(s) = scenario {
        keys += s
            .events
            .iter()
            .filter_map(load_map)
            .map(BTreeMap::len)
            .sum::<usize>();
    }
    Size {
        keys,
        items: item_count(scenario),
    }
}

/// Every removable element of `scenario`: its [`size`] and the items of its list values.
pub fn elements(scenario: &Scenario) -> usize {
    let m = maps(scenario);
    let listed: usize = Level::ALL
        .into_iter()
        .flat_map(|l| m.at(l).values())
        .filter_map(|v| list_separator(v).map(|sep| v.split(sep).count()))
        .sum();
    size(scenario).total() + listed
}

/// The separator of a list value, when `value` is a list of more than one item.
fn list_separator(value: &str) -> Option<char> {
    ['|', ','].into_iter().find(|c| value.contains(*c))
}

/// Every removal that applies to `scenario`: a memory graph's inputs and outputs first, then
/// whole items, then keys, then list items.
pub fn removals(scenario: &Scenario) -> Vec<Removal> {
    let mut out: Vec<Removal> = Vec::new();
    // A graph input or output first: it takes its tensor and its list items with it.
    if let Scenario::Memory(s) = scenario {
        out.extend((0..s.inputs).map(|i| Removal::Port(true, i)));
        out.extend((0..s.outputs).map(|i| Removal::Port(false, i)));
    }
    match scenario {
        Scenario::Weights(s) => {
            out.extend((0..s.constants.len()).map(Removal::Item));
            out.extend((0..s.setup.len()).map(Removal::Setup));
        }
        _ => out.extend((0..item_count(scenario)).map(Removal::Item)),
    }
    if let Scenario::Memory(s) = scenario {
        if s.run.is_some() {
            out.push(Removal::Run);
        }
    }
    let m = maps(scenario);
    for level in Level::ALL {
        out.extend(m.at(level).keys().map(|k| Removal::Key(level, k.clone())));
    }
    if let Scenario::Session(s) = scenario {
        for (i, e) in s.events.iter().enumerate() {
            if let Some(map) = load_map(e) {
                out.extend(map.keys().map(|k| Removal::LoadKey(i, k.clone())));
            }
        }
    }
    for level in Level::ALL {
        for (k, v) in m.at(level) {
            if let Some(sep) = list_separator(v) {
                let n = v.split(sep).count();
                let mut len = n.div_ceil(2);
                loop {
                    out.extend(
                        (0..n)
                            .step_by(len)
                            .map(|start| Removal::ListItems(level, k.clone(), start, len)),
                    );
                    if len == 1 {
                        break;
                    }
                    len = len.div_ceil(2);
                }
            }
        }
    }
    out
}

impl Removal {
    /// `scenario` without this element, or `None` when it has no such element.
    pub fn apply(&self, scenario: &Scenario) -> Option<Scenario> {
        let mut s = scenario.clone();
        self.apply_to(&mut s).then_some(s)
    }

    /// Applies the removal to `s` in place; false, with `s` untouched, where it does not apply.
    fn apply_to(&self, s: &mut Scenario) -> bool {
        match (self, s) {
            (Removal::Key(level, key), s) => maps_mut(s).at_mut(*level).remove(key).is_some(),
            (Removal::LoadKey(i, key), Scenario::Session(s)) => match s.events.get_mut(*i) {
                Some(SessionEvent::Load {
                    options: Some(map), ..
                }) => map.remove(key).is_some(),
                _ => false,
            },
            (Removal::Item(i), s) => remove_at(s, *i),
            (Removal::Setup(i), Scenario::Weights(s)) => {
                (*i < s.setup.len()).then(|| s.setup.remove(*i)).is_some()
            }
            (Removal::Run, Scenario::Memory(s)) => s.run.take().is_some(),
            (Removal::Port(input, i), Scenario::Memory(s)) => remove_port(s, *input, *i),
            (Removal::ListItems(level, key, ..), s) => {
                apply_list_run(s, *level, key, std::slice::from_ref(self))
            }
            _ => false,
        }
    }

    /// `scenario` with every removal of `removals` that applies, in order. One copy, changed in
    /// place: the shrinker applies the removals to every value it tries. Consecutive removals
    /// of items of one list split it once ([`apply_list_run`]), where one at a time would split
    /// and join a list of a thousand items for each.
    pub fn apply_all(removals: &[Removal], scenario: &Scenario) -> Scenario {
        let mut s = scenario.clone();
        let mut rest = removals;
        while let Some(first) = rest.first() {
            let run = match first {
                Removal::ListItems(level, key, ..) => rest
                    .iter()
                    .take_while(
                        |r| matches!(r, Removal::ListItems(l, k, ..) if l == level && k == key),
                    )
                    .count(),
                _ => 1,
            };
            match first {
                Removal::ListItems(level, key, ..) => {
                    apply_list_run(&mut s, *level, key, &rest[..run]);
                }
                _ => {
                    first.apply_to(&mut s);
                }
            }
            rest = &rest[run..];
        }
        s
    }
}

/// Applies `run`, removals of items of the list at `key` and `level`, as applying each in turn
/// would: each splits the list's text at the separator it holds then (`|` before `,`, see
/// [`list_separator`]), so a pair list down to one pair is split at its comma next, and a list
/// down to one item without a separator takes no removal any more. False, with the list
/// untouched, where none applies.
fn apply_list_run(s: &mut Scenario, level: Level, key: &str, run: &[Removal]) -> bool {
    let Some(value) = maps_mut(s).at_mut(level).get_mut(key) else {
        return false;
    };
    let Some(mut sep) = list_separator(value) else {
        return false;
    };
    let text = std::mem::take(value);
    let mut items: Vec<&str> = text.split(sep).collect();
    let mut changed = false;
    for r in run {
        let Removal::ListItems(_, _, start, len) = r else {
            continue;
        };
        if items.len() < 2 {
            match items.first() {
                Some(only) if sep == '|' && only.contains(',') => {
                    items = only.split(',').collect();
                    sep = ',';
                }
                _ => break,
            }
        }
        if *start < items.len() && *len > 0 {
            let end = start.saturating_add(*len).min(items.len());
            items.drain(*start..end);
            changed = true;
        }
    }
    *value = if changed {
        items.join(&sep.to_string())
    } else {
        text.clone()
    };
    changed
}

/// The index lists and pairs that name graph inputs or outputs, and where in a pair.
const INPUT_LISTS: [(&str, Option<usize>); 2] = [
    ("ge.exec.inputReuseMemIndexes", None),
    ("ge.exec.outputReuseInputMemIndexes", Some(0)),
];
const OUTPUT_LISTS: [(&str, Option<usize>); 2] = [
    ("ge.exec.outputReuseMemIndexes", None),
    ("ge.exec.outputReuseInputMemIndexes", Some(1)),
];

/// Takes graph input (or output) `i` out of `s` ([`Removal::Port`]).
fn remove_port(s: &mut ge_spec::vocab::memory::MemoryScenario, input: bool, i: u32) -> bool {
    use ge_spec::vocab::memory::Role;
    let count = if input { &mut s.inputs } else { &mut s.outputs };
    if i >= *count {
        return false;
    }
    *count -= 1;
    s.tensors.retain(|t| match t.role {
        Role::Input { index } => !input || index != i,
        Role::Output { index } => input || index != i,
        _ => true,
    });
    for t in &mut s.tensors {
        match &mut t.role {
            Role::Input { index } if input && *index > i => *index -= 1,
            Role::Output { index } if !input && *index > i => *index -= 1,
            _ => {}
        }
    }
    if let Some(run) = &mut s.run {
        let addresses = if input {
            &mut run.inputs
        } else {
            &mut run.outputs
        };
        if (i as usize) < addresses.len() {
            addresses.remove(i as usize);
        }
    }
    let lists = if input { INPUT_LISTS } else { OUTPUT_LISTS };
    for level in Level::ALL {
        for (key, part) in lists {
            if let Some(value) = s.options.at_mut(level).get_mut(key) {
                *value = renumbered(value, part, u64::from(i));
            }
        }
    }
    true
}

/// An index list (`part` is `None`: `a,b,c`) or a list of pairs (`a,b|c,d`, the index in
/// `part` of each) without index `i`: items (pairs) naming it go, higher ones move down one.
/// Items that are not numbers stay as written.
fn renumbered(value: &str, part: Option<usize>, i: u64) -> String {
    let shift = |item: &str| -> Option<String> {
        match item.trim().parse::<u64>() {
            Ok(n) if n == i => None,
            Ok(n) if n > i => Some((n - 1).to_string()),
            _ => Some(item.to_owned()),
        }
    };
    match part {
        None => value
            .split(',')
            .filter_map(shift)
            .collect::<Vec<_>>()
            .join(","),
        Some(p) => value
            .split('|')
            .filter_map(|pair| {
                let mut sides: Vec<String> = pair.split(',').map(str::to_owned).collect();
                if sides.len() != 2 {
                    return Some(pair.to_owned());
                }
                sides[p] = shift(&sides[p])?;
                Some(sides.join(","))
            })
            .collect::<Vec<_>>()
            .join("|"),
    }
}

fn remove_at(s: &mut Scenario, i: usize) -> bool {
    fn take<T>(v: &mut Vec<T>, i: usize) -> bool {
        (i < v.len()).then(|| v.remove(i)).is_some()
    }
    match s {
        Scenario::Options(_) => false,
        Scenario::Transfer(s) => take(&mut s.inputs, i),
        Scenario::Memory(s) => take(&mut s.tensors, i),
        Scenario::Session(s) => take(&mut s.events, i),
        Scenario::Weights(s) => take(&mut s.constants, i),
    }
}

/// Removes elements of `best.0` one at a time while `still` finds the problem in what is left,
/// until no single removal keeps it or `budget` judgements are spent (each call of `still`
/// costs one). Returns the smallest scenario with its problem, and the removals made, in order.
pub fn remove_while<P>(
    mut best: (Scenario, P),
    budget: &mut u32,
    mut still: impl FnMut(&Scenario) -> Option<P>,
) -> ((Scenario, P), Vec<Removal>) {
    let mut made = Vec::new();
    loop {
        let mut progress = false;
        let mut candidates = removals(&best.0);
        let mut i = 0;
        while i < candidates.len() {
            if *budget == 0 {
                return (best, made);
            }
            let Some(smaller) = candidates[i].apply(&best.0) else {
                i += 1;
                continue;
            };
            *budget -= 1;
            match still(&smaller) {
                Some(p) => {
                    made.push(candidates[i].clone());
                    best = (smaller, p);
                    progress = true;
                    // Positions after the one removed have moved: list them again, and retry
                    // from the same place.
                    candidates = removals(&best.0);
                }
                None => i += 1,
            }
        }
        if !progress {
            return (best, made);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_spec::vocab::transfer::{Placement, TransferInput, TransferScenario};

    fn transfer() -> Scenario {
        let mut s = TransferScenario::default();
        s.options
            .graph
            .insert("ge.exec.input_fusion_size".into(), "10".into());
        s.options.global.insert("ge.junk".into(), "x".into());
        s.options
            .session
            .insert("ge.exec.inputReuseMemIndexes".into(), "0,1,2".into());
        for (index, size) in [(0, 5), (1, 50), (2, 7)] {
            s.inputs.push(TransferInput {
                index,
                size,
                placement: Placement::Host,
            });
        }
        Scenario::Transfer(s)
    }

    #[test]
    fn removal_keeps_only_what_the_failure_needs() {
        // The "failure": a threshold of 10 at graph level and an input of 50 bytes.
        let fails = |s: &Scenario| {
            let Scenario::Transfer(t) = s else {
                return None;
            };
            (t.options
                .graph
                .get("ge.exec.input_fusion_size")
                .map(String::as_str)
                == Some("10")
                && t.inputs.iter().any(|i| i.size == 50))
            .then_some(())
        };
        let start = transfer();
        assert_eq!(size(&start), Size { keys: 3, items: 3 });
        let mut budget = 100;
        let ((small, ()), made) = remove_while((start.clone(), ()), &mut budget, fails);
        assert_eq!(size(&small), Size { keys: 1, items: 1 });
        assert!(budget < 100);
        // Replayed on the original, the removals give the same scenario.
        assert_eq!(Removal::apply_all(&made, &start), small);
    }

    proptest::proptest! {
        /// A run of list-item removals applied at once ends where applying them one by one
        /// does, whatever the list holds (`|` pairs, `,` items, both, neither) and wherever
        /// the ranges fall.
        #[test]
        fn list_runs_apply_as_one_at_a_time(
            value in "[0-9|,]{0,40}",
            ranges in proptest::collection::vec((0usize..12, 0usize..5), 0..8),
        ) {
            let key = "ge.exec.outputReuseInputMemIndexes";
            let mut s = transfer();
            if let Scenario::Transfer(t) = &mut s {
                t.options.graph.insert(key.into(), value);
            }
            let run: Vec<Removal> = ranges
                .into_iter()
                .map(|(start, len)| Removal::ListItems(Level::Graph, key.into(), start, len))
                .collect();
            let mut one_by_one = s.clone();
            for r in &run {
                r.apply_to(&mut one_by_one);
            }
            proptest::prop_assert_eq!(Removal::apply_all(&run, &s), one_by_one);
        }
    }

    #[test]
    fn list_items_are_removed_by_ranges() {
        let s = transfer();
        let r = Removal::ListItems(Level::Session, "ge.exec.inputReuseMemIndexes".into(), 1, 1);
        let Some(Scenario::Transfer(t)) = r.apply(&s) else {
            panic!("the list item applies");
        };
        assert_eq!(t.options.session["ge.exec.inputReuseMemIndexes"], "0,2");
        let gone = Removal::ListItems(Level::Session, "ge.exec.inputReuseMemIndexes".into(), 3, 1);
        assert_eq!(gone.apply(&s), None);
        let half = Removal::ListItems(Level::Session, "ge.exec.inputReuseMemIndexes".into(), 0, 2);
        let Some(Scenario::Transfer(t)) = half.apply(&s) else {
            panic!("the range applies");
        };
        assert_eq!(t.options.session["ge.exec.inputReuseMemIndexes"], "2");
    }

    #[test]
    fn a_graph_input_goes_with_its_tensor_its_address_and_the_lists_naming_it() {
        use ge_spec::vocab::memory::{MemoryScenario, Role, RunAddresses, Tensor};
        let tensor = |name: &str, role| Tensor {
            name: name.into(),
            size: 64,
            first: 0,
            last: 1,
            role,
        };
        let mut m = MemoryScenario {
            inputs: 3,
            outputs: 1,
            tensors: vec![
                tensor("a", Role::Input { index: 0 }),
                tensor("b", Role::Input { index: 1 }),
                tensor("c", Role::Input { index: 2 }),
                tensor("y", Role::Output { index: 0 }),
            ],
            run: Some(RunAddresses {
                inputs: vec![10, 11, 12],
                outputs: vec![20],
            }),
            ..MemoryScenario::default()
        };
        let graph = &mut m.options.graph;
        graph.insert("ge.exec.inputReuseMemIndexes".into(), "0,1,2,x".into());
        graph.insert(
            "ge.exec.outputReuseInputMemIndexes".into(),
            "1,0|2,0|bad".into(),
        );
        graph.insert("ge.exec.outputReuseMemIndexes".into(), "0".into());
        let Some(Scenario::Memory(m)) = Removal::Port(true, 1).apply(&Scenario::Memory(m)) else {
            panic!("input 1 goes");
        };
        assert_eq!(m.inputs, 2);
        let roles: Vec<(&str, &Role)> = m
            .tensors
            .iter()
            .map(|t| (t.name.as_str(), &t.role))
            .collect();
        assert_eq!(
            roles,
            [
                ("a", &Role::Input { index: 0 }),
                ("c", &Role::Input { index: 1 }),
                ("y", &Role::Output { index: 0 }),
            ]
        );
        assert_eq!(m.run.as_ref().map(|r| r.inputs.clone()), Some(vec![10, 12]));
        assert_eq!(m.options.graph["ge.exec.inputReuseMemIndexes"], "0,1,x");
        assert_eq!(
            m.options.graph["ge.exec.outputReuseInputMemIndexes"],
            "1,0|bad"
        );
        // The output list names outputs: it is not touched.
        assert_eq!(m.options.graph["ge.exec.outputReuseMemIndexes"], "0");
        let s = Scenario::Memory(m);
        let Some(Scenario::Memory(m)) = Removal::Port(false, 0).apply(&s) else {
            panic!("output 0 goes");
        };
        assert_eq!((m.outputs, m.tensors.len()), (0, 2));
        assert_eq!(m.options.graph["ge.exec.outputReuseMemIndexes"], "");
        assert_eq!(m.options.graph["ge.exec.outputReuseInputMemIndexes"], "bad");
        assert_eq!(Removal::Port(false, 0).apply(&Scenario::Memory(m)), None);
    }

    #[test]
    fn a_budget_of_nothing_removes_nothing() {
        let start = transfer();
        let mut budget = 0;
        let ((same, ()), made) = remove_while((start.clone(), ()), &mut budget, |_| Some(()));
        assert_eq!(same, start);
        assert!(made.is_empty());
    }
}
