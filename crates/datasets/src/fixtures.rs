//! Photo-like stand-ins in the real file layouts, for tests and loader benchmarks on machines
//! without the real data (CI and this project's machines cannot download it).

use std::path::Path;

use image::{codecs::jpeg::JpegEncoder, ExtendedColorType};
use rand::{rngs::StdRng, Rng, SeedableRng};

use crate::error::DatasetError;

/// Writes `root/PetImages/{Cat,Dog}/{0..per_class}.jpg`: RGB JPEGs (quality 90) of varied sizes
/// around the real set's typical 500x375, filled with smooth gradients, waves and noise so they
/// compress and decode like photographs rather than like flat colour.
pub fn write_pet_images(root: &Path, per_class: usize, seed: u64) -> Result<(), DatasetError> {
    let mut rng = StdRng::seed_from_u64(seed);
    for class in ["Cat", "Dog"] {
        let dir = root.join("PetImages").join(class);
        std::fs::create_dir_all(&dir).map_err(|source| DatasetError::Io {
            path: dir.clone(),
            source,
        })?;
        for i in 0..per_class {
            let (w, h) = (rng.random_range(300..=500), rng.random_range(250..=500));
            let pixels = photo_like(w, h, &mut rng);
            let path = dir.join(format!("{i}.jpg"));
            let mut bytes = Vec::new();
            JpegEncoder::new_with_quality(&mut bytes, 90)
                .encode(&pixels, w, h, ExtendedColorType::Rgb8)
                .map_err(|e| DatasetError::Format {
                    path: path.clone(),
                    message: format!("cannot encode the fixture: {e}"),
                })?;
            std::fs::write(&path, bytes).map_err(|source| DatasetError::Io { path, source })?;
        }
    }
    Ok(())
}

/// `w x h` RGB bytes, row-major: a gradient, two waves of random frequency and pixel noise.
pub fn photo_like(w: u32, h: u32, rng: &mut StdRng) -> Vec<u8> {
    let (fx, fy) = (
        rng.random_range(0.01..0.08f32),
        rng.random_range(0.01..0.08f32),
    );
    let tint: [f32; 3] = [rng.random(), rng.random(), rng.random()];
    let mut pixels = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            let wave = ((x as f32 * fx).sin() + (y as f32 * fy).cos()) * 0.25 + 0.5;
            let ramp = (x + y) as f32 / (w + h) as f32;
            for t in tint {
                let v =
                    255.0 * (0.5 * wave + 0.3 * ramp * t + 0.2 * t) + rng.random_range(-12.0..12.0);
                pixels.push(v.clamp(0.0, 255.0) as u8);
            }
        }
    }
    pixels
}
