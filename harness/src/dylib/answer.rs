//! Reading an engine's answer as `ge_conformance_answer` stores it (include/ge_conformance.h):
//! one of three JSON objects told apart by `type`, the observation tagged by `capability`.
//!
//! Two readings, one result. [`read_whole`] reads any answer and says what is wrong with a bad
//! one. The answer asked for nearly always is an observation of the asked capability, which
//! [`read_asked`] reads straight into that capability's type; any other answer, or anything it
//! does not expect, goes to [`read_whole`]. serde's tagged enums would buffer the whole answer,
//! then the observation again, before reading them: a tenth of the `cabi` fuzz target's time.

use std::fmt;

use ge_spec::vocab::{
    MemoryObservation, OptionsObservation, SessionObservation, TransferObservation,
    WeightsObservation,
};
use ge_spec::{Capability, Observation};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;

/// One answer of an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DylibAnswer {
    Observation { observation: Observation },
    NotSupported { reason: String },
    Error { message: String },
}

impl DylibAnswer {
    /// The answer in `bytes` to a scenario of `capability`, or what is wrong with it.
    pub(super) fn read(bytes: &[u8], capability: Capability) -> Result<DylibAnswer, String> {
        match read_asked(bytes, capability) {
            Some(observation) => Ok(DylibAnswer::Observation { observation }),
            None => read_whole(bytes),
        }
    }
}

/// An answer as the JSON object it is: `type` and the fields of every type, read in one pass.
/// [`read_whole`] then requires exactly the fields of its `type`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFields {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, deserialize_with = "present")]
    observation: Option<Observation>,
    #[serde(default, deserialize_with = "present")]
    reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    message: Option<String>,
}

/// A field that is there holds a value (`null` is no string and no observation); `None` only
/// when it is absent.
fn present<'de, D: de::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Any answer in `bytes`, or what is wrong with it.
fn read_whole(bytes: &[u8]) -> Result<DylibAnswer, String> {
    let f: AnswerFields = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let kind = f.kind;
    let own = match kind.as_str() {
        "observation" => "observation",
        "not-supported" => "reason",
        "error" => "message",
        _ => {
            return Err(format!(
                "unknown type `{kind}`, expected one of `observation`, `not-supported`, `error`"
            ))
        }
    };
    let set = [
        ("observation", f.observation.is_some()),
        ("reason", f.reason.is_some()),
        ("message", f.message.is_some()),
    ];
    if let Some((other, _)) = set.iter().find(|(name, is)| *is && *name != own) {
        return Err(format!(
            "an answer of type `{kind}` has the field `{other}`; its only field is `{own}`"
        ));
    }
    match (f.observation, f.reason, f.message) {
        (Some(observation), ..) => Ok(DylibAnswer::Observation { observation }),
        (_, Some(reason), _) => Ok(DylibAnswer::NotSupported { reason }),
        (.., Some(message)) => Ok(DylibAnswer::Error { message }),
        _ => Err(format!(
            "an answer of type `{kind}` lacks its field `{own}`"
        )),
    }
}

/// The observation of an answer in `bytes` that is exactly `type` `observation` and an
/// observation tagged `capability`, each once, read as [`read_whole`] reads it; `None` for any
/// other answer or anything unexpected, which [`read_whole`] then reads.
fn read_asked(bytes: &[u8], capability: Capability) -> Option<Observation> {
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let observation = de::Deserializer::deserialize_map(&mut d, AskedAnswer(capability)).ok()??;
    d.end().ok()?;
    Some(observation)
}

/// The "not what this reader expects" of [`read_asked`]: the answer goes to [`read_whole`].
const ELSEWHERE: &str = "read whole";

/// The answer's object, its observation read as `capability`'s.
struct AskedAnswer(Capability);

impl<'de> Visitor<'de> for AskedAnswer {
    type Value = Option<Observation>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an answer")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut kind, mut observation) = (None, None);
        while let Some(key) = map.next_key::<&str>()? {
            match key {
                "type" if kind.is_none() => kind = Some(map.next_value::<&str>()?),
                "observation" if observation.is_none() => {
                    observation = Some(map.next_value_seed(AskedObservation(self.0))?);
                }
                _ => return Err(de::Error::custom(ELSEWHERE)),
            }
        }
        Ok(observation.filter(|_| kind == Some("observation")))
    }
}

/// An observation read as `capability`'s, whose tag must name it.
struct AskedObservation(Capability);

impl<'de> DeserializeSeed<'de> for AskedObservation {
    type Value = Observation;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Observation, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for AskedObservation {
    type Value = Observation;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} observation", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Observation, A::Error> {
        let mut tag = None;
        let fields = de::value::MapAccessDeserializer::new(WithoutTag { map, tag: &mut tag });
        let observation = match self.0 {
            Capability::Options => Observation::Options(OptionsObservation::deserialize(fields)?),
            Capability::Transfer => {
                Observation::Transfer(TransferObservation::deserialize(fields)?)
            }
            Capability::Memory => Observation::Memory(MemoryObservation::deserialize(fields)?),
            Capability::Session => Observation::Session(SessionObservation::deserialize(fields)?),
            Capability::Weights => Observation::Weights(WeightsObservation::deserialize(fields)?),
        };
        match tag {
            Some(tag) if tag == self.0 => Ok(observation),
            _ => Err(de::Error::custom(ELSEWHERE)),
        }
    }
}

/// The fields of an observation but its tag, `capability`, which is kept aside (once).
struct WithoutTag<'t, A> {
    map: A,
    tag: &'t mut Option<Capability>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutTag<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<&str>()? else {
                return Ok(None);
            };
            if key != "capability" {
                return seed.deserialize(key.into_deserializer()).map(Some);
            }
            if self.tag.is_some() {
                return Err(de::Error::custom(ELSEWHERE));
            }
            *self.tag = Some(self.map.next_value()?);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_spec::{Backend, Spec};

    /// The answer as the header's tagged object, read as serde reads a tagged enum: what
    /// [`DylibAnswer::read`] must agree with, on every answer and for every capability asked.
    #[derive(Debug, Deserialize)]
    #[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
    enum Tagged {
        Observation { observation: Observation },
        NotSupported { reason: String },
        Error { message: String },
    }

    impl From<Tagged> for DylibAnswer {
        fn from(t: Tagged) -> Self {
            match t {
                Tagged::Observation { observation } => DylibAnswer::Observation { observation },
                Tagged::NotSupported { reason } => DylibAnswer::NotSupported { reason },
                Tagged::Error { message } => DylibAnswer::Error { message },
            }
        }
    }

    /// Whether both readings of `text` agree for every capability asked; `Some(true)` when
    /// the asked capability's own reading took it.
    fn agree(text: &str) -> Vec<bool> {
        let tagged = serde_json::from_str::<Tagged>(text).map(DylibAnswer::from);
        Capability::ALL
            .into_iter()
            .map(|asked| {
                let read = DylibAnswer::read(text.as_bytes(), asked);
                match (&read, &tagged) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{text} asked {asked}"),
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{text} asked {asked}: read {a:?}, the tagged object {b:?}"),
                }
                read_asked(text.as_bytes(), asked).is_some()
            })
            .collect()
    }

    #[test]
    fn an_answer_reads_as_the_tagged_object_of_the_header() {
        let observation = serde_json::to_string(&Observation::Options(Default::default()))
            .expect("an observation is JSON");
        let types = [
            None,
            Some("\"observation\""),
            Some("\"not-supported\""),
            Some("\"error\""),
            Some("\"other\""),
            Some("3"),
        ];
        let fields = [
            format!("\"observation\":{observation}"),
            "\"observation\":null".to_owned(),
            "\"observation\":{\"capability\":\"options\"}".to_owned(),
            "\"reason\":\"r\"".to_owned(),
            "\"reason\":null".to_owned(),
            "\"message\":\"m\"".to_owned(),
            "\"extra\":1".to_owned(),
        ];
        let (mut read, mut refused, mut asked) = (0, 0, 0);
        for kind in types {
            for subset in 0..1u32 << fields.len() {
                let mut parts: Vec<&str> = (0..fields.len())
                    .filter(|i| subset >> i & 1 == 1)
                    .map(|i| fields[i].as_str())
                    .collect();
                let twice = |name: &str| parts.iter().filter(|p| p.starts_with(name)).count() > 1;
                if twice("\"observation\"") || twice("\"reason\"") {
                    continue;
                }
                let kind = kind.map(|k| format!("\"type\":{k}"));
                if let Some(kind) = &kind {
                    // The type last, where a tagged enum must look ahead for it.
                    parts.push(kind);
                }
                let text = format!("{{{}}}", parts.join(","));
                asked += agree(&text).into_iter().filter(|a| *a).count();
                match serde_json::from_str::<Tagged>(&text) {
                    Ok(_) => read += 1,
                    Err(_) => refused += 1,
                }
            }
        }
        // Both ways were met: answers read and answers refused.
        assert!(
            read >= 3 && refused > 100 && asked >= 1,
            "{read} {refused} {asked}"
        );
    }

    /// Every observation the reference gives to the cases of the tables, as an answer with its
    /// tag first (as serde writes it), last, doubled or naming another capability: read alike
    /// whatever capability is asked, and by the asked capability's reading when it is its own.
    #[test]
    fn observations_read_alike_by_either_reading() {
        let reference = ge_reference::Reference::new(ge_spec::Profile::Documented);
        let sandbox = tempfile::tempdir().expect("a sandbox");
        let mut asked = 0;
        for case in Spec::embedded().cases().iter().step_by(3) {
            let Ok(observation) = reference.answer(&case.case.scenario, sandbox.path()) else {
                continue;
            };
            let capability = observation.capability();
            let json = serde_json::to_string(&observation).expect("an observation is JSON");
            let tag = format!("\"capability\":\"{capability}\"");
            let rest = json
                .strip_prefix(&format!("{{{tag}"))
                .and_then(|r| r.strip_suffix('}'))
                .expect("an object, the tag first")
                .trim_start_matches(',');
            let others = format!("\"capability\":\"{}\"", other(capability));
            for body in [
                json.clone(),
                format!("{{{rest},{tag}}}"),
                format!("{{{tag},{tag},{rest}}}"),
                format!("{{{others},{rest}}}"),
            ] {
                let body = body.replace(",}", "}").replace("{,", "{");
                let text = format!("{{\"observation\":{body},\"type\":\"observation\"}}");
                let took = agree(&text);
                asked += usize::from(
                    took[Capability::ALL
                        .iter()
                        .position(|c| *c == capability)
                        .expect("one of all")],
                );
            }
        }
        assert!(asked > 100, "{asked}");
    }

    /// A capability other than `c`.
    fn other(c: Capability) -> Capability {
        if c == Capability::Options {
            Capability::Transfer
        } else {
            Capability::Options
        }
    }
}
