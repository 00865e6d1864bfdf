-- Owned by the admin console (issue 7). One row per minute of serving, written by the console's
-- MinuteHistory so the dashboard's charts start from the recent past after a restart.
-- Rates are per second over the minute; latencies are milliseconds over the requests of that minute
-- (NULL when there were none); page counts are averages of the once-a-second samples.
CREATE TABLE console_minute_stats (
    minute_start        TIMESTAMP WITH TIME ZONE NOT NULL PRIMARY KEY,
    samples             INTEGER          NOT NULL,
    requests_per_s      DOUBLE PRECISION NOT NULL,
    prompt_tokens_per_s DOUBLE PRECISION NOT NULL,
    gen_tokens_per_s    DOUBLE PRECISION NOT NULL,
    running_avg         DOUBLE PRECISION NOT NULL,
    waiting_avg         DOUBLE PRECISION NOT NULL,
    preemptions         BIGINT           NOT NULL,
    aborted             BIGINT           NOT NULL,
    prefix_queries      BIGINT           NOT NULL,
    prefix_hits         BIGINT           NOT NULL,
    hit_rate_window     DOUBLE PRECISION,
    ttft_p50_ms         DOUBLE PRECISION,
    ttft_p99_ms         DOUBLE PRECISION,
    itl_p50_ms          DOUBLE PRECISION,
    itl_p99_ms          DOUBLE PRECISION,
    large_used_avg      DOUBLE PRECISION NOT NULL,
    large_cached_avg    DOUBLE PRECISION NOT NULL,
    middle_used_avg     DOUBLE PRECISION NOT NULL,
    middle_cached_avg   DOUBLE PRECISION NOT NULL,
    small_used_avg      DOUBLE PRECISION NOT NULL,
    small_cached_avg    DOUBLE PRECISION NOT NULL
);
