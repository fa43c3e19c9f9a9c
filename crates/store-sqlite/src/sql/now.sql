-- The instant a transaction works at: the pinned `now` of a test, or the database clock in the
-- stored text format (which compares as time).
SELECT coalesce(?1, strftime('%Y-%m-%d %H:%M:%f', 'now')) AS NOW_
