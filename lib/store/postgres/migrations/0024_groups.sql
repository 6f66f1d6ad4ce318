-- Fair groups (docs/groups.md): `group_key` is the group (a tenant) a job takes turns in when
-- jobs are claimed. A grouped job that is due when it is enqueued waits in its group's lane, the
-- lane of held-back jobs (migration 0018) whose `parked_key` is 'group:' and the group, so the
-- claim reads the groups that have due work one probe each, and takes turns across them; the
-- claim index never holds a group's backlog. Adding a nullable column rewrites nothing.
ALTER TABLE {{jobs}} ADD COLUMN group_key text;
