/** The states in which a job holds its unique key. */
export const HOLDING = `('scheduled', 'awaiting_parents', 'running')`;
