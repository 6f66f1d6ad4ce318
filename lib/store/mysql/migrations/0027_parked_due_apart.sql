-- Nothing changes on this store: its parked jobs' run-time index is on a generated column that
-- only the operator reads name (0019), so no claim can choose it (see the PostgreSQL migration of
-- the same number). The version is kept in step with the other SQL stores.
DO 0;
