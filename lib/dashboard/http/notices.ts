/**
 * The one-line results an action redirects with. The redirect carries a key, never the text, so a
 * crafted link cannot make the dashboard say something it did not do.
 */
export const NOTICES: Readonly<Record<string, string>> = {
  'job.cancelled': 'The job was cancelled.',
  'job.cancel_requested': 'The job is running: it was asked to cancel, and ends cancelled when its attempt stops.',
  'job.already_cancelled': 'The job was already cancelled.',
  'job.already_requested': 'The job had already been asked to cancel.',
  'job.run_now': 'The job is due now; the next claim by a worker serving its queue takes it.',
  'job.replayed': 'The job was replayed: it is due now, with its attempts reset.',
  'queue.paused': 'The queue is paused: workers claim none of its jobs until it is resumed.',
  'queue.resumed': 'The queue is resumed.',
  'schedule.paused': 'The schedule is paused.',
  'schedule.resumed': 'The schedule is resumed.',
  'schedule.replayed': 'The schedule was replayed: it mints again, and the occurrence that stopped it is due now unless it was discarded.',
  'schedule.triggered': 'The schedule was triggered: one occurrence is due now.',
  'jobs.cancelled': 'The selected jobs were cancelled; running ones were asked to stop and end cancelled when their attempts do.',
  'jobs.cancel_partial': 'Some of the selected jobs were cancelled; the others had finished since the page was drawn.',
  'bulk.replayed': 'The selected dead letters were replayed.',
  'bulk.replay_partial': 'Some of the selected jobs were replayed; the others could not be: they had left the dead-letter list since the page was drawn, or another job holds their unique key.',
  'bulk.cancelled': 'The selected dead letters were cancelled; retention deletes them in time.',
  'sequences.replayed': 'The selected jobs were replayed: each is due now, and the job behind it in its sequence runs once it succeeds.',
  'sequences.replay_partial': 'Some of the selected jobs were replayed; the others were no longer dead-lettered or quarantined when the action ran.',
  'sequences.cancelled': 'The selected jobs were cancelled: the job behind each in its sequence is released, and retention deletes them in time.',
  'sequences.cancel_partial': 'Some of the selected jobs were cancelled; the others were no longer dead-lettered or quarantined when the action ran.',
  'batch.cancelled': 'The batch was cancelled: its jobs and callbacks that had not ended are cancelled, so no callback runs.',
  'batch.cancel_requested': 'The batch was cancelled: its waiting jobs and callbacks are cancelled, and its running jobs were asked to stop; each ends cancelled when its attempt does.',
  'batch.nothing_to_cancel': 'Nothing was cancelled: every job and callback of the batch had ended already.',
  'bulk.cancel_partial': 'Some of the selected jobs were cancelled; the others had left the dead-letter list since the page was drawn.',
};
