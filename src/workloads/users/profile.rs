//! User profiles for simulated mailbox users (LoadGen-class): how many tasks of each kind a
//! user does in a simulated day, the sizes of the messages they send and how many recipients
//! each has. Every constant is in docs/profiles.md ("Simulated mailbox users") with its source;
//! where no published figure exists the number is storlab's choice, and says so there.

/// A user task, as LoadGen names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Task {
    /// Open the mailbox: the folder hierarchy and the Inbox view.
    Logon,
    /// Close the mailbox.
    Logoff,
    /// Compose and send one message (its recipients may be on other databases).
    SendMail,
    /// Read new messages in the Inbox; reply to, forward, delete or move some of them.
    ReadAndProcessMessages,
    /// Read a week of the calendar.
    BrowseCalendar,
    /// Create a calendar item.
    MakeAppointment,
    /// Send a meeting request (a message with a calendar item) to several recipients.
    RequestMeeting,
    /// Accept a meeting request: the calendar item and a reply.
    RespondToMeeting,
    /// Read the contacts folder.
    BrowseContacts,
    /// Delete items from a folder (moved to Deleted Items).
    DeleteItems,
    /// Move messages between folders.
    Move,
    /// Search a folder for a word.
    Search,
}

impl Task {
    /// Every task, in report order.
    pub(crate) const ALL: [Task; 12] = [
        Task::Logon,
        Task::Logoff,
        Task::SendMail,
        Task::ReadAndProcessMessages,
        Task::BrowseCalendar,
        Task::MakeAppointment,
        Task::RequestMeeting,
        Task::RespondToMeeting,
        Task::BrowseContacts,
        Task::DeleteItems,
        Task::Move,
        Task::Search,
    ];

    /// The name LoadGen reports it under.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Task::Logon => "Logon",
            Task::Logoff => "Logoff",
            Task::SendMail => "Send Mail",
            Task::ReadAndProcessMessages => "Read and Process Messages",
            Task::BrowseCalendar => "Browse Calendar",
            Task::MakeAppointment => "Make Appointment",
            Task::RequestMeeting => "Request Meeting",
            Task::RespondToMeeting => "Respond to Meeting",
            Task::BrowseContacts => "Browse Contacts",
            Task::DeleteItems => "Delete Items",
            Task::Move => "Move",
            Task::Search => "Search",
        }
    }
}

/// A user profile: tasks per simulated day.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Profile {
    /// The profile's name (`heavy`).
    pub name: String,
    /// Tasks of each kind per user per day; tasks absent from the list are not done.
    pub tasks_per_day: Vec<(Task, f64)>,
}

impl Profile {
    /// Tasks per user per day, all kinds.
    pub(crate) fn tasks_per_day(&self) -> f64 {
        self.tasks_per_day.iter().map(|t| t.1).sum()
    }

    #[cfg(test)]
    /// Messages a user sends per day: Send Mail, plus replies and forwards made while
    /// processing messages, plus meeting requests and responses.
    pub(crate) fn messages_sent_per_day(&self) -> f64 {
        self.tasks_per_day
            .iter()
            .map(|&(task, n)| match task {
                Task::SendMail | Task::RequestMeeting | Task::RespondToMeeting => n,
                Task::ReadAndProcessMessages => n * REPLY_OR_FORWARD_SHARE,
                _ => 0.0,
            })
            .sum()
    }

    /// The named built-in profile (`light`, `average`, `heavy`, `very-heavy`,
    /// `double-heavy`), or `None`.
    pub(crate) fn builtin(name: &str) -> Option<Profile> {
        let &(_, scale) = SCALES.iter().find(|(n, _)| *n == name)?;
        Some(Profile {
            name: name.to_string(),
            tasks_per_day: HEAVY
                .iter()
                .map(|&(task, n)| {
                    // Logon and Logoff happen at least once a day.
                    let daily = matches!(task, Task::Logon | Task::Logoff);
                    (task, if daily { (n * scale).max(n) } else { n * scale })
                })
                .collect(),
        })
    }

    /// The built-in profiles' names.
    pub(crate) fn builtin_names() -> impl Iterator<Item = &'static str> {
        SCALES.iter().map(|s| s.0)
    }
}

/// Heavy (Outlook 2007 Online, 47 tasks per user per day: the seed study's LoadGen runs). The
/// split among tasks is storlab's choice (we found LoadGen's own table nowhere): 20 messages
/// sent (6 Send Mail, 1 meeting request, 1 response, and 12 replies or forwards from 20 Read
/// and Process Messages tasks) and 80 received, as Microsoft's Heavy sizing profile (20 sent,
/// 80 received).
pub(crate) const HEAVY: [(Task, f64); 12] = [
    (Task::Logon, 1.0),
    (Task::Logoff, 1.0),
    (Task::SendMail, 6.0),
    (Task::ReadAndProcessMessages, 20.0),
    (Task::BrowseCalendar, 5.0),
    (Task::MakeAppointment, 1.0),
    (Task::RequestMeeting, 1.0),
    (Task::RespondToMeeting, 1.0),
    (Task::BrowseContacts, 4.0),
    (Task::DeleteItems, 3.0),
    (Task::Move, 2.0),
    (Task::Search, 2.0),
];

/// The share of Read and Process Messages tasks that reply to or forward a message (storlab's
/// choice, so that Heavy sends 20 messages a day).
pub(crate) const REPLY_OR_FORWARD_SHARE: f64 = 0.6;

/// Messages a Read and Process Messages task reads (storlab's choice: 20 tasks read the 80
/// messages a Heavy user receives).
pub(crate) const MESSAGES_READ_PER_TASK: u32 = 4;

/// Each profile's tasks as a multiple of Heavy's, by messages sent and received per day
/// (Microsoft's Exchange 2007 sizing profiles: light 5/20, average 10/40, heavy 20/80, very
/// heavy 30/120; double heavy is the seed study's Heavy with every task doubled).
pub(crate) const SCALES: [(&str, f64); 5] = [
    ("light", 0.25),
    ("average", 0.5),
    ("heavy", 1.0),
    ("very-heavy", 1.5),
    ("double-heavy", 2.0),
];

/// Message sizes (bytes) and their weights (percent), averaging 75.1 KiB (about 75 KB, the average
/// message of Microsoft's Exchange 2007/2010 sizing). The mix itself is storlab's choice.
pub(crate) const MESSAGE_SIZES: [(u64, u32); 5] = [
    (4 << 10, 54),
    (8 << 10, 16),
    (32 << 10, 12),
    (128 << 10, 13),
    (1 << 20, 5),
];

/// Recipients per message and their weights, averaging 4 (Heavy receives 80 messages a day for
/// 20 sent, so each has 4 recipients on average in a closed population). The mix is storlab's
/// choice; 10 and 14 stand for distribution lists.
pub(crate) const RECIPIENTS: [(u32, u32); 5] = [(1, 40), (2, 20), (4, 20), (10, 10), (14, 10)];

#[cfg(test)]
/// Weighted mean of a (value, weight) table.
pub(crate) fn weighted_mean<V: Copy + Into<f64>>(table: &[(V, u32)]) -> f64 {
    let total: u32 = table.iter().map(|t| t.1).sum();
    table
        .iter()
        .map(|&(v, w)| v.into() * f64::from(w))
        .sum::<f64>()
        / f64::from(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_is_47_tasks_and_double_heavy_94() {
        let heavy = Profile::builtin("heavy").unwrap();
        assert_eq!(heavy.tasks_per_day(), 47.0);
        assert!((heavy.messages_sent_per_day() - 20.0).abs() < 1e-9);
        let double = Profile::builtin("double-heavy").unwrap();
        // Every task doubled, as the seed study's Double Heavy.
        assert_eq!(double.tasks_per_day(), 94.0);
        // A light user still logs on once a day.
        let light = Profile::builtin("light").unwrap();
        assert_eq!(light.tasks_per_day(), 45.0 * 0.25 + 2.0);
        assert!(Profile::builtin("medium").is_none());
        assert_eq!(Profile::builtin_names().count(), SCALES.len());
    }

    #[test]
    fn received_mail_matches_the_sizing_profiles() {
        // Messages received = sent × recipients (everyone's recipients are simulated users).
        for (name, scale) in SCALES {
            let p = Profile::builtin(name).unwrap();
            let sent = p.messages_sent_per_day();
            let received = sent * weighted_mean(&RECIPIENTS);
            assert!((sent - 20.0 * scale).abs() < 1e-9, "{name}: {sent} sent");
            assert!(
                (received - 80.0 * scale).abs() < 1e-9,
                "{name}: {received} received"
            );
            // Read and Process Messages reads what arrives.
            let reads = p
                .tasks_per_day
                .iter()
                .find(|t| t.0 == Task::ReadAndProcessMessages)
                .unwrap()
                .1
                * f64::from(MESSAGES_READ_PER_TASK);
            assert!((reads - received).abs() < 1e-9, "{name}: reads {reads}");
        }
    }

    #[test]
    fn messages_average_about_75_kb() {
        let mean = weighted_mean(&MESSAGE_SIZES.map(|(b, w)| (b as f64, w)));
        assert!((mean / 1000.0 - 75.0).abs() < 75.0 * 0.05, "{mean}");
    }
}
