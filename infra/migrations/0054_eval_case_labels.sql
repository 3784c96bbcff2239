-- An evaluation case made from a real run keeps that run's governance labels (issue 21's rule: labels travel with
-- the data): the highest tier of what its chat held (its classification included) and whether anything untrusted
-- entered it. The case's run launches with them, so its text reaches only a model of that tier, and the gates treat
-- it as untrusted where the source was. Cases written by hand or imported are the admin's own words: clean.
ALTER TABLE eval_cases
    ADD COLUMN content_tier smallint NOT NULL DEFAULT 0 CHECK (content_tier BETWEEN 0 AND 2),
    ADD COLUMN untrusted boolean NOT NULL DEFAULT false;
