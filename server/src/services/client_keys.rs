//! Client keys: made (shown once), listed, revoked, and a presented key
//! checked. Only a key's SHA-256 digest is stored.

use api::read::Read;
use api::{
    ClientKeyCreated, ClientKeyId, ClientKeyRequest, ClientKeyView, ErrorCode, FieldError,
    FieldPath,
};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::{Services, new_id};
use crate::domain::{ClientKey, ClientKeyWrite};
use crate::error::AppError;

/// Every client key begins so: a scanner (or a person) can tell it from
/// other secrets.
pub const CLIENT_KEY_PREFIX: &str = "sbk_";

/// The digest a key is stored and looked up by: SHA-256, in hex.
pub fn key_digest(key: &str) -> String {
    Sha256::digest(key.trim().as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A new key: the prefix and 32 random bytes (two v4 UUIDs' 244 random bits
/// and their fixed version bits), base64url.
fn new_key() -> String {
    let mut bytes = [0_u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    format!(
        "{CLIENT_KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

fn view(key: ClientKey) -> ClientKeyView {
    ClientKeyView {
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        profile_ids: key.profile_ids,
        created_at: key.created_at,
        revoked_at: key.revoked_at,
    }
}

impl Services {
    /// Make a client key for the profiles the request names (each must exist);
    /// the answer is the only time the key is shown.
    pub async fn create_client_key(
        &self,
        request: Read<ClientKeyRequest>,
    ) -> Result<ClientKeyCreated, AppError> {
        let request = request.check(ClientKeyRequest::check)?;
        let profiles = self.store.list_profiles().await?;
        let unknown: Vec<FieldError> = request
            .profile_ids
            .iter()
            .enumerate()
            .filter(|(_, id)| !profiles.iter().any(|profile| &profile.id == *id))
            .map(|(index, _)| {
                FieldError::new(
                    &FieldPath::root().field("profile_ids").index(index),
                    ErrorCode::NotFound,
                    "names no profile",
                )
            })
            .collect();
        if !unknown.is_empty() {
            return Err(unknown.into());
        }
        let key = new_key();
        let mut profile_ids = request.profile_ids;
        let mut kept = std::collections::HashSet::new();
        profile_ids.retain(|id| kept.insert(id.clone()));
        let write = ClientKeyWrite {
            digest: key_digest(&key),
            key: ClientKey {
                id: ClientKeyId::new(new_id()),
                name: request.name,
                prefix: key.chars().take(CLIENT_KEY_PREFIX.len() + 4).collect(),
                profile_ids,
                created_at: self.clock.now(),
                revoked_at: None,
            },
        };
        let stored = self.store.create_client_key(write).await?;
        Ok(ClientKeyCreated {
            key,
            client_key: view(stored),
        })
    }

    /// Every client key, newest first.
    pub async fn list_client_keys(&self) -> Result<Vec<ClientKeyView>, AppError> {
        Ok(self
            .store
            .list_client_keys()
            .await?
            .into_iter()
            .map(view)
            .collect())
    }

    /// Revoke a client key: from now on it is refused.
    pub async fn revoke_client_key(&self, id: &ClientKeyId) -> Result<ClientKeyView, AppError> {
        Ok(view(
            self.store.revoke_client_key(id, self.clock.now()).await?,
        ))
    }

    /// The working key `presented` is, if it is one.
    pub async fn client_key(&self, presented: &str) -> Result<Option<ClientKey>, AppError> {
        if !presented.trim().starts_with(CLIENT_KEY_PREFIX) {
            return Ok(None);
        }
        Ok(self
            .store
            .client_key_by_digest(&key_digest(presented))
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_new_each_time_and_stored_only_as_digests() {
        let (one, two) = (new_key(), new_key());
        assert_ne!(one, two);
        assert!(
            one.starts_with(CLIENT_KEY_PREFIX) && one.len() == 4 + 43,
            "{one}"
        );
        let digest = key_digest(&one);
        assert_eq!(digest.len(), 64);
        assert!(!digest.contains(&one[4..]));
        assert_eq!(key_digest(&format!(" {one}\n")), digest, "trimmed");
    }
}
