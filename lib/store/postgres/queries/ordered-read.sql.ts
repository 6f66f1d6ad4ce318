/**
 * The planner's choices an operator's bounded read is not allowed, for its transaction only (run
 * it first, in the read's own transaction). A read that walks an index in order and stops after a
 * fixed number of rows (a listing page, the oldest due jobs, the newest finished ones) has that
 * number as a constant: PostgreSQL plans a range it believes smaller than that as a bitmap scan of
 * the whole range and a sort, and with statistics taken before a burst the range may by now hold
 * millions of rows. Ruled out, the only plan left is the ordered index scan that stops where the
 * read does, whatever the statistics say. JIT is off as for the claim.
 */
export const ORDERED_READ_SETTINGS = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true),
  set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`;
