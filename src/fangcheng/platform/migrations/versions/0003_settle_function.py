"""PostgreSQL: a coin hand settled by one call of a function, ``fangcheng_settle_hand``.

Called outside an explicit transaction, the call is the hand's one transaction and one
round trip (the two-statement settlement took four with BEGIN and COMMIT, and the
client's CPU for them bounded the throughput). It does what that settlement does, in the
same order: insert the journal under its unique key (``ON CONFLICT DO NOTHING``: a hand
booked before books nothing), lock the hand's people in id order, write the hand's row
and lines and move the balances, the house (or issuance) row last. The lines and moves
come from the client, computed with each seat capped by its balance at hand start; the
function books them only if every person's current balance still covers what the seat
owes up to that cap (then the current balance caps nothing more, D44), and otherwise
raises SQLSTATE ``FC001``, which undoes the journal, for the client to settle the hand the long
way. The hand's stored caps are the least of the start and the current balance, as the
long way stores them. SQLite has no such function: nothing changes there.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# p_seats: per seat [account, balance at hand start (null: a house bot), what it owes up
# to that balance]; p_lines: [account, seat or null, amount, memo]; p_moves: per account
# [account, coins, 积分, hands]. Returns the new journal's id, null if booked before.
_SETTLE = """
CREATE FUNCTION fangcheng_settle_hand(
    p_key text, p_created_at double precision, p_memo text, p_hand_id text, p_room text,
    p_base bigint, p_record text, p_digest text, p_seats json, p_lines json, p_moves json
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    booked bigint;
    covered boolean;
    caps text;
BEGIN
    INSERT INTO journals (key, kind, created_at, memo)
    VALUES (p_key, 'hand', p_created_at, p_memo)
    ON CONFLICT (key) DO NOTHING RETURNING id INTO booked;
    IF booked IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM accounts
     WHERE id IN (SELECT (s->>0)::bigint FROM json_array_elements(p_seats) AS s
                   WHERE s->>1 IS NOT NULL)
       AND kind = 'person'
     ORDER BY id FOR NO KEY UPDATE;
    SELECT coalesce(bool_and(coalesce(a.balance >= (s.e->>2)::bigint, false))
                        FILTER (WHERE s.e->>1 IS NOT NULL), false),
           '[' || string_agg('[' || (s.e->>0) || ','
                             || coalesce(least((s.e->>1)::bigint, a.balance)::text, 'null')
                             || ']', ',' ORDER BY s.n) || ']'
      INTO covered, caps
      FROM json_array_elements(p_seats) WITH ORDINALITY AS s (e, n)
      LEFT JOIN accounts AS a
        ON s.e->>1 IS NOT NULL AND a.id = (s.e->>0)::bigint AND a.kind = 'person';
    IF NOT covered THEN
        RAISE EXCEPTION 'hand %: a balance no longer covers its seat', p_hand_id
              USING ERRCODE = 'FC001';
    END IF;
    INSERT INTO coin_hands (hand_id, journal_id, room, base, seats, record, digest)
    VALUES (p_hand_id, booked, p_room, p_base, caps, p_record, p_digest);
    INSERT INTO journal_lines (journal_id, account_id, seat, amount, memo)
    SELECT booked, (l.e->>0)::bigint, (l.e->>1)::smallint, (l.e->>2)::bigint, l.e->>3
      FROM json_array_elements(p_lines) WITH ORDINALITY AS l (e, n) ORDER BY l.n;
    UPDATE accounts
       SET balance = accounts.balance + (m->>1)::bigint,
           points = accounts.points + (m->>2)::bigint,
           hands = accounts.hands + (m->>3)::bigint
      FROM json_array_elements(p_moves) AS m
     WHERE accounts.id = (m->>0)::bigint;
    RETURN booked;
END $$
"""


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(_SETTLE)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP FUNCTION fangcheng_settle_hand")
