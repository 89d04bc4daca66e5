//! Task recipes: what each user task does to the mail store, as a sequence of steps. A step is
//! one transaction on one mailbox: pages it reads, pages it changes (read first when not in
//! the cache), pages it writes new (a message body: no read), and the log record its commit
//! appends, durable (the task waits for the log) or lazy. Sending a message is a step on the
//! sender's mailbox (the Sent Items copy) and one delivery step per recipient, on the
//! recipient's mailbox, which may be in another database.
//!
//! Recipes read and change the users' [`Mailbox`] records (item counts per folder, unread
//! messages); every choice they make (recipients, which messages) comes from the task's own
//! random stream, so a task does the same thing whenever it runs. The counts of pages each
//! task touches are storlab's choices (docs/profiles.md, "Task recipes").

use super::layout::{Folder, Layout, Message, ROW_BYTES, VIEW_ENTRY_BYTES};
use crate::workloads::users::profile::{
    MESSAGES_READ_PER_TASK, RECIPIENTS, REPLY_OR_FORWARD_SHARE, Task,
};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// Page runs a step holds at most.
pub(crate) const MAX_RUNS: usize = 16;
/// Bytes a row update (a flag, a property) logs.
pub(crate) const UPDATE_LOG_BYTES: u64 = 512;
/// Inbox view entries read at logon (a screen of messages and more).
pub(crate) const LOGON_VIEW_ITEMS: u64 = 50;
/// Inbox headers read at logon (the preview pane's newest messages).
pub(crate) const LOGON_HEADERS: u64 = 20;
/// Calendar items a Browse Calendar task reads (a week).
pub(crate) const CALENDAR_ITEMS: u64 = 20;
/// Contacts a Browse Contacts task reads.
pub(crate) const CONTACT_ITEMS: u64 = 100;
/// Items a Delete Items or Move task moves.
pub(crate) const ITEMS_MOVED: u64 = 2;
/// Inbox items a Search task scans (no content index: the rows are read).
pub(crate) const SEARCH_ITEMS: u64 = 500;
/// Size of a calendar item's body, bytes.
pub(crate) const CALENDAR_ITEM_BYTES: u64 = 4096;

/// How a step uses a run of pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Touch {
    /// Read (from the cache, or the database on a miss).
    Read,
    /// Read, then changed: dirty at the step's commit.
    Modify,
    /// Written new (no read on a miss): dirty at the step's commit.
    Fresh,
}

/// Contiguous pages of one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// How the step uses them.
    pub touch: Touch,
    /// First page.
    pub first: u64,
    /// Pages.
    pub pages: u64,
    /// Pages from one to the next (1: contiguous).
    pub stride: u64,
}

impl Run {
    /// Its pages, in order.
    pub(crate) fn page_numbers(&self) -> impl Iterator<Item = u64> + use<> {
        let (first, stride) = (self.first, self.stride);
        (0..self.pages).map(move |k| first + k * stride)
    }

    /// Its last page.
    #[cfg(test)]
    pub(crate) fn last(&self) -> u64 {
        self.first + (self.pages.max(1) - 1) * self.stride
    }
}

/// One transaction on one mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// The database it works in.
    pub db: u32,
    runs: [Run; MAX_RUNS],
    len: usize,
    /// Bytes its commit appends to the database's log (0: nothing to commit).
    pub log_bytes: u64,
    /// Whether the commit waits for the log write.
    pub durable: bool,
}

impl Step {
    pub(super) fn new(db: u32) -> Self {
        Step {
            db,
            runs: [Run {
                touch: Touch::Read,
                first: 0,
                pages: 0,
                stride: 1,
            }; MAX_RUNS],
            len: 0,
            log_bytes: 0,
            durable: false,
        }
    }

    /// Adds a run of contiguous pages (one page: `(page, 1)`).
    pub(super) fn add(&mut self, touch: Touch, (first, pages): (u64, u64)) {
        self.add_strided(touch, (first, pages, 1));
    }

    /// Adds a run of `pages` pages `stride` apart from `first`.
    pub(super) fn add_strided(&mut self, touch: Touch, (first, pages, stride): (u64, u64, u64)) {
        if pages == 0 {
            return;
        }
        assert!(
            self.len < MAX_RUNS,
            "a recipe step has at most {MAX_RUNS} runs"
        );
        self.runs[self.len] = Run {
            touch,
            first,
            pages,
            stride,
        };
        self.len += 1;
    }

    /// Its page runs.
    pub(crate) fn runs(&self) -> &[Run] {
        &self.runs[..self.len]
    }
}

/// What the recipes know of a mailbox between tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Mailbox {
    /// Items ever put in each folder ([`Folder::ALL`] order): the next item's number.
    pub items: [u32; 6],
    /// Inbox messages not read yet.
    pub unread: u32,
}

/// Calibration knobs of a version's model (docs/profiles.md, "Calibration").
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Knobs {
    /// Log bytes per byte of message body written (ESE logs long values with their
    /// page-level records).
    pub log_per_body_byte: f64,
    /// Secondary indexes per folder (views, search folders, restrictions): every change to an
    /// item's row changes its entry in each.
    pub secondary_indexes: u64,
    /// Bytes of a secondary index entry (its key and the row's bookmark): how many pages an
    /// index spreads over, so how much of it a cache of a given size holds.
    pub index_entry_bytes: u64,
}

/// The mailboxes of a population, spread over the databases (user `u` is mailbox
/// `u / databases` of database `u % databases`).
#[derive(Debug)]
pub(crate) struct Mailboxes {
    /// Where a mailbox's data lives in its database.
    pub layout: Layout,
    /// Databases.
    pub databases: u32,
    /// One record per user.
    pub users: Vec<Mailbox>,
    /// The version's knobs.
    pub knobs: Knobs,
    /// Messages put in mailboxes so far (Sent Items copies and deliveries).
    pub messages: u64,
}

impl Mailboxes {
    /// `users` mailboxes as initialised (every folder at its initial items, nothing unread).
    pub(crate) fn new(layout: Layout, databases: u32, users: u64, knobs: Knobs) -> Self {
        let fresh = Mailbox {
            items: Folder::ALL.map(|f| layout.initial_items(f) as u32),
            unread: 0,
        };
        Mailboxes {
            layout,
            databases,
            users: vec![fresh; users as usize],
            knobs,
            messages: 0,
        }
    }

    /// The database and mailbox (within it) of `user`.
    pub(crate) fn place(&self, user: u64) -> (u32, u64) {
        let d = u64::from(self.databases);
        ((user % d) as u32, user / d)
    }

    /// Log bytes of inserting a message of `bytes`: its body, its row and its view entry.
    fn insert_log_bytes(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.knobs.log_per_body_byte) as u64 + ROW_BYTES + VIEW_ENTRY_BYTES
    }

    /// A step inserting a new item of `bytes` (its own size when `None`) into `folder` of
    /// `user`: body pages written new, header and view pages changed. Returns the item's size.
    fn insert(&mut self, user: u64, folder: Folder, bytes: Option<u64>, step: &mut Step) -> u64 {
        let (_, mailbox) = self.place(user);
        let n = &mut self.users[user as usize].items[folder as usize];
        let m = self
            .layout
            .message_of(mailbox, folder, u64::from(*n), bytes);
        *n = n.wrapping_add(1);
        self.messages += u64::from(matches!(folder, Folder::Sent | Folder::Inbox));
        step.add(Touch::Fresh, m.body);
        step.add(Touch::Modify, (m.header, 1));
        step.add(Touch::Modify, (m.view, 1));
        index_changes(step, &m);
        step.log_bytes += self.insert_log_bytes(m.bytes);
        m.bytes
    }

    /// Moves the item before the newest `back` of `from` to `to` in `user`'s mailbox (rows and
    /// view entries change; the body stays).
    fn move_item(&mut self, user: u64, from: Folder, to: Folder, back: u64, step: &mut Step) {
        let (_, mailbox) = self.place(user);
        let end = u64::from(self.users[user as usize].items[from as usize]);
        let old = self
            .layout
            .message(mailbox, from, end.saturating_sub(back + 1));
        step.add(Touch::Modify, (old.header, 1));
        step.add(Touch::Modify, (old.view, 1));
        index_changes(step, &old);
        let n = &mut self.users[user as usize].items[to as usize];
        let new = self.layout.message(mailbox, to, u64::from(*n));
        *n = n.wrapping_add(1);
        step.add(Touch::Modify, (new.header, 1));
        step.add(Touch::Modify, (new.view, 1));
        index_changes(step, &new);
        step.log_bytes += 2 * (ROW_BYTES + VIEW_ENTRY_BYTES);
    }

    /// A step reading the newest `items` view entries and header rows of `folder`.
    fn browse(&self, user: u64, folder: Folder, items: u64, headers: u64, step: &mut Step) {
        let (_, mailbox) = self.place(user);
        let end = u64::from(self.users[user as usize].items[folder as usize]);
        step.add(
            Touch::Read,
            self.layout.view_pages(mailbox, folder, end, items),
        );
        if headers > 0 {
            step.add(
                Touch::Read,
                self.layout.header_pages(mailbox, folder, end, headers),
            );
        }
    }
}

/// Where a task is in its recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The task's own first step (or steps, for Read and Process Messages: `left` messages).
    Start { left: u32 },
    /// Sending a message of `bytes`: the Sent Items copy.
    Submit { bytes: Option<u64>, recipients: u32 },
    /// Delivering the message of `bytes` to `left` more recipients.
    Deliver { bytes: u64, left: u32 },
    /// Nothing more.
    Done,
}

/// One running task: its kind, its user, where it is, and its own random stream.
#[derive(Debug, Clone)]
pub(crate) struct Recipe {
    /// What the task is.
    pub task: Task,
    /// Whose.
    pub user: u64,
    stage: Stage,
    rng: SmallRng,
}

impl Recipe {
    /// Task `task` of `user`, its choices drawn from `seed`.
    pub(crate) fn new(task: Task, user: u64, seed: u64) -> Self {
        let left = match task {
            Task::ReadAndProcessMessages => MESSAGES_READ_PER_TASK,
            _ => 1,
        };
        Recipe {
            task,
            user,
            stage: Stage::Start { left },
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The next step, or `None` when the task is done.
    pub(crate) fn next_step(&mut self, mb: &mut Mailboxes) -> Option<Step> {
        loop {
            let (db, _) = mb.place(self.user);
            let mut step = Step::new(db);
            match self.stage {
                Stage::Done => return None,
                Stage::Start { left } => {
                    self.start(mb, left, &mut step);
                    if step.len > 0 {
                        return Some(step);
                    }
                }
                Stage::Submit { bytes, recipients } => {
                    let bytes = mb.insert(self.user, Folder::Sent, bytes, &mut step);
                    step.durable = true;
                    self.stage = Stage::Deliver {
                        bytes,
                        left: recipients,
                    };
                    return Some(step);
                }
                Stage::Deliver { left: 0, .. } => self.stage = Stage::Done,
                Stage::Deliver { bytes, left } => {
                    let to = self.recipient(mb);
                    let mut step = Step::new(mb.place(to).0);
                    mb.insert(to, Folder::Inbox, Some(bytes), &mut step);
                    let r = &mut mb.users[to as usize].unread;
                    *r = r.saturating_add(1);
                    step.durable = true;
                    self.stage = Stage::Deliver {
                        bytes,
                        left: left - 1,
                    };
                    return Some(step);
                }
            }
        }
    }

    /// The task's own part (before any message it sends); sets the next stage.
    fn start(&mut self, mb: &mut Mailboxes, left: u32, step: &mut Step) {
        let user = self.user;
        let (_, mailbox) = mb.place(user);
        let send = |rng: &mut SmallRng, recipients: Option<u32>| Stage::Submit {
            bytes: None,
            recipients: recipients.unwrap_or_else(|| draw(rng, &RECIPIENTS)),
        };
        self.stage = Stage::Done;
        match self.task {
            Task::Logon => {
                step.add(Touch::Read, (mb.layout.root(mailbox), 2));
                mb.browse(user, Folder::Inbox, LOGON_VIEW_ITEMS, LOGON_HEADERS, step);
                step.log_bytes = UPDATE_LOG_BYTES;
            }
            Task::Logoff => {
                step.add(Touch::Modify, (mb.layout.root(mailbox), 1));
                step.log_bytes = UPDATE_LOG_BYTES;
            }
            Task::SendMail => self.stage = send(&mut self.rng, None),
            Task::ReadAndProcessMessages => self.read_one(mb, left, step),
            Task::BrowseCalendar => {
                mb.browse(user, Folder::Calendar, CALENDAR_ITEMS, CALENDAR_ITEMS, step);
            }
            Task::MakeAppointment | Task::RequestMeeting => {
                mb.insert(user, Folder::Calendar, Some(CALENDAR_ITEM_BYTES), step);
                step.durable = true;
                if self.task == Task::RequestMeeting {
                    self.stage = send(&mut self.rng, None);
                }
            }
            Task::RespondToMeeting => {
                let end = u64::from(mb.users[user as usize].items[Folder::Calendar as usize]);
                let item = mb
                    .layout
                    .message(mailbox, Folder::Calendar, end.saturating_sub(1));
                step.add(Touch::Modify, (item.header, 1));
                index_changes(step, &item);
                step.log_bytes = UPDATE_LOG_BYTES;
                step.durable = true;
                // The response goes to the organiser.
                self.stage = send(&mut self.rng, Some(1));
            }
            Task::BrowseContacts => {
                mb.browse(user, Folder::Contacts, CONTACT_ITEMS, CONTACT_ITEMS, step);
            }
            Task::DeleteItems | Task::Move => {
                let to = match self.task {
                    Task::DeleteItems => Folder::Deleted,
                    _ => Folder::Other,
                };
                for i in 0..ITEMS_MOVED {
                    mb.move_item(user, Folder::Inbox, to, i, step);
                    if step.len + 8 > MAX_RUNS {
                        break;
                    }
                }
                step.durable = true;
            }
            Task::Search => mb.browse(user, Folder::Inbox, SEARCH_ITEMS, SEARCH_ITEMS, step),
        }
    }

    /// Read and Process Messages: reads the newest unread message (or the newest) with its
    /// view page and marks it read; after the last, replies to or forwards one at
    /// [`REPLY_OR_FORWARD_SHARE`].
    fn read_one(&mut self, mb: &mut Mailboxes, left: u32, step: &mut Step) {
        let user = self.user;
        let (_, mailbox) = mb.place(user);
        let record = &mut mb.users[user as usize];
        let end = u64::from(record.items[Folder::Inbox as usize]);
        let n = end.saturating_sub(u64::from(record.unread.max(1)));
        record.unread = record.unread.saturating_sub(1);
        let m = mb.layout.message(mailbox, Folder::Inbox, n);
        step.add(Touch::Read, (m.view, 1));
        step.add(Touch::Read, m.body);
        step.add(Touch::Modify, (m.header, 1));
        index_changes(step, &m);
        step.log_bytes = UPDATE_LOG_BYTES;
        self.stage = if left > 1 {
            Stage::Start { left: left - 1 }
        } else if self.rng.random::<f64>() < REPLY_OR_FORWARD_SHARE {
            Stage::Submit {
                bytes: None,
                recipients: draw(&mut self.rng, &RECIPIENTS),
            }
        } else {
            Stage::Done
        };
    }

    /// A recipient other than the sender (the sender itself in a population of one).
    fn recipient(&mut self, mb: &Mailboxes) -> u64 {
        let users = mb.users.len() as u64;
        if users < 2 {
            return self.user;
        }
        let r = self.rng.random_range(0..users - 1);
        if r >= self.user { r + 1 } else { r }
    }
}

/// Adds the changes to `m`'s entries in its folder's secondary indexes: each index's root page
/// read (the seek), its leaf page changed.
fn index_changes(step: &mut Step, m: &Message) {
    step.add_strided(Touch::Read, m.index_roots);
    step.add_strided(Touch::Modify, m.index);
}

/// A value of a (value, weight) table, drawn in proportion to the weights.
fn draw(rng: &mut SmallRng, table: &[(u32, u32)]) -> u32 {
    let total: u32 = table.iter().map(|t| t.1).sum();
    let mut r = rng.random_range(0..total);
    for &(v, w) in table {
        if r < w {
            return v;
        }
        r -= w;
    }
    table[table.len() - 1].0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secondary indexes per folder in [`tiny`].
    const INDEXES: u64 = 2;

    /// 8 users on 2 databases of 4 mailboxes of 2 MiB (8 KiB pages).
    fn tiny() -> Mailboxes {
        let layout = Layout::new(8192, 2 << 20, 4, 20, INDEXES, VIEW_ENTRY_BYTES, 3);
        Mailboxes::new(
            layout,
            2,
            8,
            Knobs {
                log_per_body_byte: 2.0,
                secondary_indexes: INDEXES,
                index_entry_bytes: VIEW_ENTRY_BYTES,
            },
        )
    }

    fn steps(task: Task, user: u64, mb: &mut Mailboxes, seed: u64) -> Vec<Step> {
        let mut r = Recipe::new(task, user, seed);
        std::iter::from_fn(|| r.next_step(mb)).collect()
    }

    /// Every run of `step` lies in `user`'s mailbox extent, in `user`'s database.
    fn in_mailbox(mb: &Mailboxes, user: u64, step: &Step) {
        let (db, mailbox) = mb.place(user);
        assert_eq!(step.db, db);
        let start = mb.layout.mailbox_start(mailbox);
        for r in step.runs() {
            assert!(r.pages > 0);
            assert!(
                r.first >= start && r.last() < start + mb.layout.mailbox_pages,
                "{r:?} outside mailbox {mailbox}"
            );
        }
    }

    fn touches(step: &Step, touch: Touch) -> u64 {
        step.runs()
            .iter()
            .filter(|r| r.touch == touch)
            .map(|r| r.pages)
            .sum()
    }

    #[test]
    fn logon_reads_the_hierarchy_and_the_inbox_and_commits_lazily() {
        let mut mb = tiny();
        let s = steps(Task::Logon, 3, &mut mb, 1);
        assert_eq!(s.len(), 1);
        in_mailbox(&mb, 3, &s[0]);
        assert_eq!(
            touches(&s[0], Touch::Modify) + touches(&s[0], Touch::Fresh),
            0
        );
        assert!(touches(&s[0], Touch::Read) >= 4, "{:?}", s[0].runs());
        assert_eq!((s[0].log_bytes, s[0].durable), (UPDATE_LOG_BYTES, false));
        let s = steps(Task::Logoff, 3, &mut mb, 1);
        assert_eq!(s.len(), 1);
        assert_eq!(touches(&s[0], Touch::Modify), 1);
        assert!(!s[0].durable);
    }

    #[test]
    fn send_mail_writes_the_sent_copy_then_delivers_to_each_recipient() {
        for seed in 0..20 {
            let mut mb = tiny();
            let before = mb.users.clone();
            let s = steps(Task::SendMail, 5, &mut mb, seed);
            let recipients = s.len() - 1;
            assert!(
                RECIPIENTS.iter().any(|r| r.0 as usize == recipients),
                "{recipients}"
            );
            // The Sent Items copy: its body written new, its row and view entry changed,
            // durable; the log carries the body.
            in_mailbox(&mb, 5, &s[0]);
            let body = touches(&s[0], Touch::Fresh);
            assert!(body >= 1);
            // Row and view page, and its entry in each secondary index.
            assert_eq!(touches(&s[0], Touch::Modify), 2 + INDEXES);
            // Each index's root, unless the index is one page (its own root), as here.
            assert_eq!(mb.layout.folder_pages(Folder::Sent).0, 1);
            assert_eq!(touches(&s[0], Touch::Read), 0);
            assert!(s[0].durable);
            assert_eq!(
                mb.users[5].items[Folder::Sent as usize],
                before[5].items[Folder::Sent as usize] + 1
            );
            // Each delivery: the same body size, in a recipient's Inbox, durable.
            let mut delivered = 0;
            for d in &s[1..] {
                assert!(d.durable);
                assert_eq!(touches(d, Touch::Fresh), body.min(mb.layout.mailbox_pages));
                assert_eq!(d.log_bytes, s[0].log_bytes);
                delivered += 1;
            }
            let got: u32 = (0..8)
                .filter(|&u| u != 5)
                .map(|u| mb.users[u].unread - before[u].unread)
                .sum();
            assert_eq!(got, delivered, "every delivery is an unread message");
            assert_eq!(mb.users[5].unread, before[5].unread, "never to the sender");
        }
    }

    #[test]
    fn read_and_process_reads_four_messages_and_marks_them_read() {
        let mut mb = tiny();
        mb.users[2].unread = 6;
        let s = steps(Task::ReadAndProcessMessages, 2, &mut mb, 9);
        let reads = MESSAGES_READ_PER_TASK as usize;
        assert!(s.len() == reads || s.len() > reads + 1, "{} steps", s.len());
        for step in &s[..reads] {
            in_mailbox(&mb, 2, step);
            assert!(
                touches(step, Touch::Read) >= 2,
                "the view page and the body"
            );
            assert_eq!(
                touches(step, Touch::Modify),
                1 + INDEXES,
                "the row, marked read, and its index entries"
            );
            assert!(!step.durable);
        }
        assert_eq!(mb.users[2].unread, 2);
        // Over many tasks, the reply-or-forward share holds.
        let replies = (0..400)
            .filter(|&seed| steps(Task::ReadAndProcessMessages, 1, &mut mb, seed).len() > reads)
            .count();
        let share = replies as f64 / 400.0;
        assert!((share - REPLY_OR_FORWARD_SHARE).abs() < 0.08, "{share}");
    }

    #[test]
    fn calendar_and_contacts_are_read_only_and_appointments_are_durable_inserts() {
        let mut mb = tiny();
        for task in [Task::BrowseCalendar, Task::BrowseContacts, Task::Search] {
            let s = steps(task, 6, &mut mb, 1);
            assert_eq!(s.len(), 1, "{task:?}");
            in_mailbox(&mb, 6, &s[0]);
            assert_eq!(
                touches(&s[0], Touch::Modify) + touches(&s[0], Touch::Fresh),
                0
            );
            assert_eq!(s[0].log_bytes, 0, "{task:?} commits nothing");
        }
        let search = touches(&steps(Task::Search, 6, &mut mb, 1)[0], Touch::Read);
        let browse = touches(&steps(Task::BrowseCalendar, 6, &mut mb, 1)[0], Touch::Read);
        assert!(
            search > browse,
            "a search reads more than a week of calendar"
        );
        let calendar = mb.users[6].items[Folder::Calendar as usize];
        let s = steps(Task::MakeAppointment, 6, &mut mb, 1);
        assert_eq!(s.len(), 1);
        assert!(s[0].durable);
        assert_eq!(touches(&s[0], Touch::Fresh), 1, "a 4 KiB item: one page");
        assert_eq!(mb.users[6].items[Folder::Calendar as usize], calendar + 1);
        // A meeting request: the calendar item, the Sent copy, the deliveries.
        let s = steps(Task::RequestMeeting, 6, &mut mb, 2);
        assert!(s.len() >= 3);
        assert_eq!(mb.users[6].items[Folder::Calendar as usize], calendar + 2);
        // A response: the calendar item changed, one message to the organiser.
        let s = steps(Task::RespondToMeeting, 6, &mut mb, 2);
        assert_eq!(s.len(), 3);
        assert_eq!(touches(&s[0], Touch::Modify), 1 + INDEXES);
    }

    #[test]
    fn delete_and_move_change_rows_and_views_of_both_folders() {
        let mut mb = tiny();
        for (task, to) in [
            (Task::DeleteItems, Folder::Deleted),
            (Task::Move, Folder::Other),
        ] {
            let before = mb.users[7].items[to as usize];
            let s = steps(task, 7, &mut mb, 1);
            assert_eq!(s.len(), 1);
            in_mailbox(&mb, 7, &s[0]);
            assert!(s[0].durable);
            assert_eq!(touches(&s[0], Touch::Fresh), 0, "bodies do not move");
            // Per item: both folders' rows, view pages and index entries.
            assert_eq!(
                touches(&s[0], Touch::Modify),
                (4 + 2 * INDEXES) * ITEMS_MOVED
            );
            assert_eq!(mb.users[7].items[to as usize], before + ITEMS_MOVED as u32);
        }
    }

    #[test]
    fn a_task_does_the_same_for_the_same_seed() {
        for task in Task::ALL {
            let (mut a, mut b) = (tiny(), tiny());
            assert_eq!(
                steps(task, 1, &mut a, 42),
                steps(task, 1, &mut b, 42),
                "{task:?}"
            );
            assert_eq!(a.users, b.users);
        }
    }
}
