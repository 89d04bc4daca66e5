//! The job every rank runs: the root's job file, broadcast as bytes, with every rank's storlab
//! version and hash of what it received gathered back and compared before any I/O; and the
//! refusal of the silent case where a launcher starts copies that each believe they are alone.

use super::{Cluster, ClusterError};
use std::time::Duration;

/// The first bytes of a broadcast job.
const MAGIC: &[u8] = b"storlab-job\0";
/// This storlab's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The job's hash: the same on every host and build.
fn hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// What a rank runs: its storlab version and the hash of the job it received, on its host.
#[derive(Debug, Clone, PartialEq)]
struct Identity {
    version: String,
    hash: u64,
    host: String,
}

impl Identity {
    fn encode(&self) -> Vec<u8> {
        format!("{}\0{:016x}\0{}", self.version, self.hash, self.host).into_bytes()
    }

    fn decode(rank: usize, bytes: &[u8]) -> Result<Identity, ClusterError> {
        let garbled = |why: &str| ClusterError::Garbled {
            rank,
            why: why.into(),
        };
        let text = std::str::from_utf8(bytes).map_err(|_| garbled("not UTF-8"))?;
        let mut parts = text.split('\0');
        let (Some(version), Some(hash), Some(host), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(garbled("not a version, a hash and a host"));
        };
        Ok(Identity {
            version: version.into(),
            hash: u64::from_str_radix(hash, 16).map_err(|_| garbled("the hash is not hex"))?,
            host: host.into(),
        })
    }
}

/// The root's job (`text`, given on rank 0) on every rank, once every rank has said that it
/// runs the same storlab version and received the same bytes. Any difference stops every rank
/// with the same error, naming the ranks, their hosts and what differs.
pub(crate) fn share_job(
    cluster: &dyn Cluster,
    text: Option<&str>,
    wait: Duration,
) -> Result<String, ClusterError> {
    let payload = text.map(|t| [MAGIC, VERSION.as_bytes(), b"\0", t.as_bytes()].concat());
    let bytes = cluster.broadcast(payload, wait)?;
    let job = bytes
        .strip_prefix(MAGIC)
        .and_then(|b| b.iter().position(|&c| c == 0).map(|i| &b[i + 1..]))
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| ClusterError::Garbled {
            rank: 0,
            why: "not a storlab job".into(),
        })?
        .to_string();
    let me = Identity {
        version: VERSION.into(),
        hash: hash(job.as_bytes()),
        host: cluster.host().into(),
    };
    let verdict = match cluster.gather(me.encode(), wait)? {
        Some(parts) => Some(
            judge(&super::complete(parts, wait)?)
                .err()
                .unwrap_or_default()
                .into_bytes(),
        ),
        None => None,
    };
    let verdict = cluster.broadcast(verdict, wait)?;
    if verdict.is_empty() {
        Ok(job)
    } else {
        Err(ClusterError::Disagree(
            String::from_utf8_lossy(&verdict).into_owned(),
        ))
    }
}

/// Whether every rank's identity is rank 0's; otherwise what differs.
fn judge(all: &[Vec<u8>]) -> Result<(), String> {
    let ids: Vec<Identity> = all
        .iter()
        .enumerate()
        .map(|(r, b)| Identity::decode(r, b))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let root = &ids[0];
    let mut wrong = Vec::new();
    for (rank, id) in ids.iter().enumerate().skip(1) {
        if id.version != root.version {
            wrong.push(format!(
                "rank {rank} on {} runs storlab {} where rank 0 on {} runs {}",
                id.host, id.version, root.host, root.version
            ));
        } else if id.hash != root.hash {
            wrong.push(format!(
                "rank {rank} on {} received a different job (hash {:016x}, rank 0's is {:016x})",
                id.host, id.hash, root.hash
            ));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the ranks do not run the same thing, so no I/O was done: {}; install the same storlab on every host",
            wrong.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Single, Threads};

    const WAIT: Duration = Duration::from_secs(10);

    #[test]
    fn every_rank_gets_the_roots_job() {
        let ranks = Threads::ranks(4, |r| format!("host{r}"));
        let jobs: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|c| {
                    s.spawn(move || {
                        let text = (c.rank() == 0).then_some("duration = \"5s\"\n");
                        share_job(&c, text, WAIT).expect("shared")
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(jobs.iter().all(|j| j == "duration = \"5s\"\n"), "{jobs:?}");
        assert_eq!(
            share_job(&Single::new(), Some("x = 1"), WAIT).unwrap(),
            "x = 1"
        );
    }

    #[test]
    fn a_rank_with_another_version_stops_every_rank_before_any_io() {
        let ids = [
            Identity {
                version: "0.1.0".into(),
                hash: 7,
                host: "a".into(),
            },
            Identity {
                version: "0.1.0".into(),
                hash: 7,
                host: "b".into(),
            },
            Identity {
                version: "0.2.0".into(),
                hash: 7,
                host: "c".into(),
            },
            Identity {
                version: "0.1.0".into(),
                hash: 8,
                host: "d".into(),
            },
        ];
        let all: Vec<Vec<u8>> = ids.iter().map(Identity::encode).collect();
        let e = judge(&all).unwrap_err();
        assert!(
            e.contains("rank 2 on c runs storlab 0.2.0 where rank 0 on a runs 0.1.0"),
            "{e}"
        );
        assert!(e.contains("rank 3 on d received a different job"), "{e}");
        assert!(!e.contains("rank 1"), "{e}");
        assert!(judge(&all[..2]).is_ok());
        let e = judge(&[all[0].clone(), b"junk".to_vec()]).unwrap_err();
        assert!(
            e.contains("rank 1 sent a message storlab cannot read"),
            "{e}"
        );
    }

    #[test]
    fn a_rank_that_never_answers_is_named() {
        let mut ranks = Threads::ranks(3, |r| format!("host{r}"));
        // Rank 2 has gone before the job is shared.
        drop(ranks.pop());
        let results: Vec<Result<String, ClusterError>> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .into_iter()
                .map(|c| {
                    s.spawn(move || {
                        let text = (c.rank() == 0).then_some("job");
                        share_job(&c, text, Duration::from_millis(300))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        match &results[0] {
            Err(ClusterError::Late { ranks, .. }) => assert_eq!(ranks, &[2]),
            other => panic!("rank 0: {other:?}"),
        }
        let text = results[0].as_ref().unwrap_err().to_string();
        assert!(text.starts_with("rank 2 did not answer within"), "{text}");
        // Rank 1 waited for the root's verdict, which never came.
        assert!(matches!(&results[1], Err(ClusterError::Late { ranks, .. }) if ranks == &[0]));
    }
}
