//! The simple query protocol: one Query message, then the server's answers up to ReadyForQuery.

use std::sync::Arc;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, Message, RowDescriptionBody};
use postgres_protocol::message::frontend;

use super::{Client, ErrorKind, PgError, Row, notice_text, server_error};

/// Notices kept for [`Client::take_notices`]; older ones are dropped so a chatty server cannot
/// grow the guest's memory.
const MAX_NOTICES: usize = 100;

/// The statement of the current result set: its columns and the rows so far.
struct ResultSet {
    columns: Arc<[String]>,
    rows: Vec<Row>,
}

impl Client {
    pub(super) fn simple_query(&mut self, sql: &str) -> Result<Vec<Row>, PgError> {
        if let Some(reason) = &self.broken {
            return Err(PgError {
                kind: ErrorKind::Protocol,
                code: None,
                message: format!(
                    "the connection to {} is unusable after an earlier failure: {reason}",
                    self.wire.peer
                ),
            });
        }
        if sql.contains('\0') {
            // The Query message is NUL-terminated, and PostgreSQL text cannot hold NUL: the
            // server's own SQLSTATE for that (character_not_in_repertoire).
            return Err(PgError {
                kind: ErrorKind::Server,
                code: Some("22021".to_owned()),
                message: "the statement contains a NUL byte, which PostgreSQL text cannot hold"
                    .to_owned(),
            });
        }
        let result = self.exchange(sql);
        if let Err(error) = &result
            && error.kind == ErrorKind::Protocol
        {
            // The server's position in the conversation is unknown now: never guess.
            self.broken = Some(error.message.clone());
        }
        result
    }

    /// Sends `sql` and reads to ReadyForQuery, even after an error, so the session stays usable.
    fn exchange(&mut self, sql: &str) -> Result<Vec<Row>, PgError> {
        self.wire.send(|buf| frontend::query(sql, buf))?;
        let mut current: Option<ResultSet> = None;
        let mut last_rows: Vec<Row> = Vec::new();
        let mut failure: Option<PgError> = None;
        loop {
            match self.wire.read_message()? {
                Message::RowDescription(body) => {
                    current = Some(ResultSet {
                        columns: self.columns(&body)?,
                        rows: Vec::new(),
                    });
                }
                Message::DataRow(body) => {
                    let Some(set) = current.as_mut() else {
                        return Err(self.wire.protocol("DataRow without RowDescription".into()));
                    };
                    let row = self.row(&set.columns, &body)?;
                    set.rows.push(row);
                }
                Message::CommandComplete(_) => {
                    // "The last statement that returned rows": one with a result set, even an
                    // empty one (SELECT ... WHERE false).
                    if let Some(set) = current.take() {
                        last_rows = set.rows;
                    }
                }
                Message::EmptyQueryResponse => {}
                Message::ErrorResponse(body) => {
                    // The server skips the rest of the string; ReadyForQuery follows.
                    current = None;
                    let error = server_error(body.fields())
                        .map_err(|e| self.wire.protocol(format!("malformed ErrorResponse: {e}")))?;
                    if error.ends_session {
                        // FATAL (an administrator ended the session, the server shuts down):
                        // no ReadyForQuery follows, only the end of the connection.
                        self.broken = Some(error.error.message.clone());
                        return Err(error.error);
                    }
                    failure.get_or_insert(error.error);
                }
                Message::NoticeResponse(body) => {
                    if let Ok(notice) = notice_text(body.fields()) {
                        if self.notices.len() == MAX_NOTICES {
                            self.notices.remove(0);
                        }
                        self.notices.push(notice);
                    }
                }
                Message::ParameterStatus(body) => {
                    if let (Ok(name), Ok(value)) = (body.name(), body.value()) {
                        self.parameters.insert(name.to_owned(), value.to_owned());
                    }
                }
                // LISTEN is not used; a notification is simply not for us.
                Message::NotificationResponse(_) => {}
                Message::CopyInResponse(_) => {
                    // The server waits for data; refusing makes it fail the statement.
                    self.wire.send(|buf| {
                        frontend::copy_fail("COPY FROM STDIN is not supported by this client", buf)
                    })?;
                }
                Message::CopyOutResponse(_) => {
                    failure.get_or_insert(PgError {
                        kind: ErrorKind::Server,
                        code: Some("0A000".to_owned()),
                        message: "COPY TO STDOUT is not supported by this client".to_owned(),
                    });
                }
                Message::CopyData(_) | Message::CopyDone => {}
                Message::ReadyForQuery(_) => {
                    return match failure {
                        Some(error) => Err(error),
                        None => Ok(last_rows),
                    };
                }
                _ => {
                    return Err(self
                        .wire
                        .protocol("unexpected message in a simple query's response".to_owned()));
                }
            }
        }
    }

    fn columns(&self, body: &RowDescriptionBody) -> Result<Arc<[String]>, PgError> {
        body.fields()
            .map(|field| Ok(field.name().to_owned()))
            .collect::<Vec<_>>()
            .map(Arc::from)
            .map_err(|e| self.wire.protocol(format!("malformed RowDescription: {e}")))
    }

    fn row(&self, columns: &Arc<[String]>, body: &DataRowBody) -> Result<Row, PgError> {
        let buffer = body.buffer();
        let values: Vec<Option<String>> = body
            .ranges()
            .map(|range| {
                let Some(range) = range else { return Ok(None) };
                let bytes = buffer.get(range).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "value out of bounds")
                })?;
                // client_encoding is UTF8, so text values are UTF-8.
                String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "value is not UTF-8")
                })
            })
            .collect()
            .map_err(|e| self.wire.protocol(format!("malformed DataRow: {e}")))?;
        if values.len() != columns.len() {
            return Err(self.wire.protocol(format!(
                "DataRow has {} values for {} columns",
                values.len(),
                columns.len()
            )));
        }
        Ok(Row {
            columns: columns.clone(),
            values,
        })
    }
}
