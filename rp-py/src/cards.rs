//! Character cards on `World` (docs/cards.md): importing a card (`import_card()`, rp-core's
//! `Engine::import_card`), reading the card an entity was made from (`card()`) and its files
//! (`card_assets()`), setting its image (`set_card_image()`), and exporting any entity as a
//! card (`export_card()`, `Engine::export_card`). What a card becomes and how
//! it goes out is rp-core's; these methods read and write the bytes and convert answers.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rp_core::cards::CardFormat;

use crate::model::{Named, entity_id};
use crate::world::World;

/// The bytes of a card given as bytes, or read from a path.
fn card_bytes(source: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = source.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    let path: std::path::PathBuf = source.extract()?;
    std::fs::read(&path)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
}

#[pymethods]
impl World {
    /// Imports the character card ``source`` (bytes, or the path of a file: a card's JSON,
    /// V1, V2 or V3, a PNG with a ``ccv3`` or ``chara`` chunk (``ccv3`` is preferred), or a
    /// CHARX zip) at
    /// ``now`` (host clock, ms; the clock moves to it) as a new character of the engine's,
    /// its facts made from the card's prose, the card kept for export. Returns the new
    /// entity's id; ``card(id)`` gives the card (its greetings: ``"first_mes"``,
    /// ``"alternate_greetings"``). The entity is not placed anywhere. The card's files are kept
    /// with it (a CHARX's other files, a PNG's image: ``card_assets(id)``).
    ///
    /// Raises ``InvalidInput`` (no card: a PNG with a broken chunk or CRC, no card chunk, bad
    /// base64, JSON that is not a card; a text too long for a fact; ``now`` before the
    /// world's clock), ``Conflict`` (an entity has its name already), ``OSError`` (a path
    /// that cannot be read); the world is then unchanged.
    #[pyo3(signature = (source, *, now))]
    fn import_card(&self, py: Python<'_>, source: &Bound<'_, PyAny>, now: i64) -> PyResult<u64> {
        let bytes = card_bytes(source)?;
        self.with_engine(py, |engine| Ok(engine.import_card(&bytes, now)?.entity.0))
    }

    /// Adds the lorebook ``source`` (bytes, or the path of a file: SillyTavern's World Info
    /// JSON, a ``lorebook_v3``, or a card's ``character_book``) at ``now`` (host clock, ms)
    /// and returns its id: every character's, or ``entity``'s alone. Its entries come into a
    /// character's prompt when what it heard activates them (docs/cards.md, "Lorebooks").
    ///
    /// Raises ``InvalidInput`` (not a lorebook; more than 100,000 entries; a regex key that is
    /// not a JavaScript regular expression; ``now`` before the world's clock), ``NotFound``
    /// (``entity``), ``OSError`` (a path that cannot be read); the world is then unchanged.
    #[pyo3(signature = (source, *, entity = None, now))]
    fn import_lorebook(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        entity: Option<Named>,
        now: i64,
    ) -> PyResult<u64> {
        let bytes = card_bytes(source)?;
        self.with_engine(py, |engine| {
            let owner = match &entity {
                Some(e) => Some(entity_id(engine.world(), e)?),
                None => None,
            };
            engine.import_lorebook(&bytes, owner, now)
        })
    }

    /// Every lorebook, as dicts: ``"id"``, ``"owner"`` (the character whose book it is, or
    /// None: every character's), ``"name"`` and ``"entries"`` (how many).
    fn lorebooks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let books = self.with_engine(py, |engine| Ok(engine.lorebooks()))?;
        crate::json::to_py(py, serde_json::to_value(&books))
    }

    /// Lorebook ``lorebook`` (an id ``import_lorebook`` returned, or ``lorebooks()`` lists) as
    /// JSON text in ``format``: ``"lorebook_v3"`` (the default) or ``"world_info"``. A book
    /// comes back as it was given when it came in that format; otherwise every setting is
    /// kept, so importing the export gives the same book. Writes it to ``path`` when given.
    ///
    /// Raises ``NotFound`` (no such book), ``InvalidInput`` (an unknown format), ``OSError``.
    #[pyo3(signature = (lorebook, path = None, *, format = "lorebook_v3"))]
    fn export_lorebook(
        &self,
        py: Python<'_>,
        lorebook: u64,
        path: Option<std::path::PathBuf>,
        format: &str,
    ) -> PyResult<String> {
        let bytes = self.with_engine(py, |engine| {
            let format = rp_core::cards::LoreFormat::from_name(format)?;
            engine.export_lorebook(lorebook, format)
        })?;
        if let Some(path) = &path {
            std::fs::write(path, &bytes).map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
            })?;
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The card ``entity`` (an id, key, name or alias) was made from, as a dict of its JSON
    /// as given (``"spec"``, ``"data"``, ...), or None for an entity made otherwise.
    ///
    /// Raises ``NotFound`` (entity).
    fn card<'py>(&self, py: Python<'py>, entity: Named) -> PyResult<Bound<'py, PyAny>> {
        let card = self.with_engine(py, |engine| {
            let entity = entity_id(engine.world(), &entity)?;
            engine.card(entity)
        })?;
        match card {
            Some(card) => {
                crate::json::to_py(py, serde_json::from_str::<serde_json::Value>(card.json()))
            }
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The files of the card ``entity`` (an id, key, name or alias) was made from, as a dict
    /// of path to bytes (docs/cards.md, "Assets"): a CHARX's files other than ``card.json``, a
    /// PNG card's image (its card chunks taken out) at ``"assets/icon/image/main.png"``, the
    /// image ``set_card_image`` set. Empty for an entity without any.
    ///
    /// Raises ``NotFound`` (entity).
    fn card_assets<'py>(&self, py: Python<'py>, entity: Named) -> PyResult<Bound<'py, PyDict>> {
        let assets = self.with_engine(py, |engine| {
            let entity = entity_id(engine.world(), &entity)?;
            engine.card_assets(entity)
        })?;
        let out = PyDict::new(py);
        for a in assets {
            out.set_item(a.path, PyBytes::new(py, &a.bytes))?;
        }
        Ok(out)
    }

    /// Sets the image of ``entity`` (an id, key, name or alias) to the PNG ``source`` (bytes,
    /// or the path of a file) at ``now`` (host clock, ms): kept as a file of its card (its
    /// ``chara`` and ``ccv3`` chunks taken out), and the image ``export_card(format="png")``
    /// carries the card on. Works for an entity made without a card.
    ///
    /// Raises ``InvalidInput`` (not a valid PNG: a bad signature, chunk or CRC; the card's
    /// files past 64 MiB; ``now`` before the world's clock), ``NotFound`` (entity),
    /// ``OSError`` (a path that cannot be read); the world is then unchanged.
    #[pyo3(signature = (entity, source, *, now))]
    fn set_card_image(
        &self,
        py: Python<'_>,
        entity: Named,
        source: &Bound<'_, PyAny>,
        now: i64,
    ) -> PyResult<()> {
        let bytes = card_bytes(source)?;
        self.with_engine(py, |engine| {
            let entity = entity_id(engine.world(), &entity)?;
            engine.set_card_image(entity, &bytes, now)
        })
    }

    /// ``entity`` (an id, key, name or alias) as a character card: a card it was made from
    /// comes back as given (the same version byte for byte), another entity as a card of its
    /// name and prose facts. ``format`` is ``"v2"``, ``"v3"``, ``"png"`` (a PNG carrying the
    /// V2 card in a ``chara`` chunk and the V3 card in a ``ccv3`` chunk, on the card's image:
    /// the one ``set_card_image`` set, else the one it came with, else a placeholder) or
    /// ``"charx"`` (a zip with the V3 card and every file of ``card_assets()``); without it, the extension of ``path`` decides (``.json``: V3,
    /// ``.png``, ``.charx``), else V3. Writes the bytes to
    /// ``path`` when given, and returns them.
    ///
    /// Raises ``NotFound`` (entity), ``InvalidInput`` (an unknown format or extension),
    /// ``OSError`` (a path that cannot be written).
    #[pyo3(signature = (entity, path = None, *, format = None))]
    fn export_card<'py>(
        &self,
        py: Python<'py>,
        entity: Named,
        path: Option<std::path::PathBuf>,
        format: Option<String>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let name = match (&format, &path) {
            (Some(f), _) => f.clone(),
            (None, Some(p)) => p.to_string_lossy().into_owned(),
            (None, None) => "v3".to_owned(),
        };
        let bytes = self.with_engine(py, |engine| {
            let format = CardFormat::from_name(&name)?;
            let entity = entity_id(engine.world(), &entity)?;
            engine.export_card(entity, format)
        })?;
        if let Some(path) = &path {
            std::fs::write(path, &bytes).map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
            })?;
        }
        Ok(PyBytes::new(py, &bytes))
    }
}
