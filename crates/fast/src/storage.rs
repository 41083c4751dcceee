//! Reaching a flex tensor's f32 storage from generic code, safely: a float primitive is
//! downcast through `Any` (every backend's primitive is `'static`), and written only where it is
//! the sole owner of a contiguous f32 buffer, so no other tensor can see the write (LibTorch's
//! tensors likewise, by burn-tch's own `can_mut`).

use std::any::Any;

use burn::tensor::{backend::Backend, DType, Tensor, TensorPrimitive};
use burn_flex::FlexTensor;

/// A float tensor taken apart to reach its storage; [`Opened::close`] puts it back together.
pub(crate) struct Opened<B: Backend>(TensorPrimitive<B>);

impl<B: Backend> Opened<B> {
    pub fn new<const D: usize>(tensor: Tensor<B, D>) -> Self {
        Self(tensor.into_primitive())
    }

    pub fn close<const D: usize>(self) -> Tensor<B, D> {
        Tensor::from_primitive(self.0)
    }

    /// The primitive as `T`, where the backend's float primitive is `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        match &self.0 {
            TensorPrimitive::Float(p) => (p as &dyn Any).downcast_ref(),
            TensorPrimitive::QFloat(_) => None,
        }
    }

    /// The primitive as `T`, writable, where the backend's float primitive is `T`.
    pub fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        match &mut self.0 {
            TensorPrimitive::Float(p) => (p as &mut dyn Any).downcast_mut(),
            TensorPrimitive::QFloat(_) => None,
        }
    }

    /// Whether this is a flex f32 tensor that [`Opened::slice_mut`] can write in place.
    pub fn writable(&self) -> bool {
        self.get::<FlexTensor>().is_some_and(|f| {
            f.dtype() == DType::F32 && f.is_unique() && f.layout().contiguous_offsets().is_some()
        })
    }

    /// The elements of a contiguous flex f32 tensor, in order.
    pub fn slice(&self) -> Option<&[f32]> {
        self.get::<FlexTensor>()
            .filter(|f| f.dtype() == DType::F32)
            .and_then(|f| f.as_slice::<f32>())
    }

    /// The elements, writable, of a tensor for which [`Opened::writable`] holds.
    pub fn slice_mut(&mut self) -> Option<&mut [f32]> {
        let flex = self.get_mut::<FlexTensor>()?;
        if flex.dtype() != DType::F32 {
            return None;
        }
        let (start, end) = flex.layout().contiguous_offsets()?;
        flex.try_storage_mut::<f32>().map(|s| &mut s[start..end])
    }
}

/// Moves `t` into type `U` where `T` is `U` (checked by `TypeId` first); safe code, no copy. How
/// a fast path takes a tensor of a generic backend `B` as the one backend it computes on.
pub(crate) fn cast<T: 'static, U: 'static>(t: T) -> Result<U, T> {
    let mut slot = Some(t);
    if let Some(u) = (&mut slot as &mut dyn Any).downcast_mut::<Option<U>>() {
        return Ok(u.take().expect("the slot was filled above"));
    }
    Err(slot.expect("the slot is untouched when the types differ"))
}
