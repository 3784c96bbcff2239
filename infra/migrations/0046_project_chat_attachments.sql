-- A project's chat is read by every member of the project (0041), so its files are too (issue 38): an editor or
-- owner of the project attaches files in it (the row is the uploader's: user_id), and every member, viewers too,
-- sees and downloads the chat's files. Reading is widened, writing is not: the one owner-only policy of 0025/0045
-- becomes one per command.
--
-- A session (app.current_user) sees an attachment when it is its own (a person's export and erase read their own
-- files, wherever they attached them), when it may read the attachment's chat (its owner, or a member of its
-- project while the chat is not restricted: the condition `chats/store.py` reads chats by), or in the retention
-- sweep (0045). Inserting and changing a row stay the uploader's; deleting one the uploader's or the sweep's. A chat
-- in no project is read by its owner only, so its files stay its owner's as before.
DROP POLICY attachment_owner ON attachments;

CREATE POLICY attachment_reader ON attachments AS RESTRICTIVE FOR SELECT
    USING (
        user_id = pa_current_user()
        OR pa_retention_sweep()
        OR EXISTS (
            SELECT 1 FROM chats c
            WHERE c.id = attachments.chat_id
              AND (c.user_id = pa_current_user()
                   OR (c.classification <> 'restricted' AND EXISTS (
                       SELECT 1 FROM project_members pm
                       WHERE pm.project_id = c.project_id AND pm.user_id = pa_current_user())))
        )
    );
CREATE POLICY attachment_uploader_insert ON attachments AS RESTRICTIVE FOR INSERT
    WITH CHECK (user_id = pa_current_user());
CREATE POLICY attachment_uploader_update ON attachments AS RESTRICTIVE FOR UPDATE
    USING (user_id = pa_current_user()) WITH CHECK (user_id = pa_current_user());
CREATE POLICY attachment_uploader_delete ON attachments AS RESTRICTIVE FOR DELETE
    USING (user_id = pa_current_user() OR pa_retention_sweep());
