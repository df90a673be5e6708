-- Orders go through a durable flow (OrderFlowTask): charged, shipped, followed up.
CREATE TABLE shop_order (
    id             bigserial   PRIMARY KEY,
    owner          text        NOT NULL,
    amount_cents   bigint      NOT NULL CHECK (amount_cents > 0),
    job_id         bigint,
    payment_id     bigint,
    carrier        text,
    shipped_at     timestamptz,
    followed_up_at timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- One payment per order however often its charge step runs: the step's key is the payment's
-- idempotency key.
CREATE TABLE payment (
    id              bigserial   PRIMARY KEY,
    order_id        bigint      NOT NULL REFERENCES shop_order (id),
    idempotency_key text        NOT NULL UNIQUE,
    amount_cents    bigint      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
