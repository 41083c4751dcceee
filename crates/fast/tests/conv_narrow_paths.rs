//! A convolution of at most 4 input channels on a path other than its narrow kernels, as a
//! machine's file may choose (`conv::choice`): the direct path's forward and, for a first layer
//! (no input gradient asked for), its weight gradient through a ReLU mask pass of its own, which
//! the narrow kernels otherwise draw inside theirs, against burn's `relu(conv.forward(x))` to
//! 1e-4 relative. Its own test binary: the choices a process reads are the process's.

use batchlab_fast::{choice, conv::conv2d_relu};
use burn::{
    backend::{Autodiff, Flex},
    nn::{
        conv::{Conv2d, Conv2dConfig},
        PaddingConfig2d,
    },
    tensor::{activation::relu, Distribution, Tensor},
};

type B = Autodiff<Flex>;

/// Output, the kernel's and the bias's gradients, the output weighted by `r`, no input gradient.
fn run(conv: &Conv2d<B>, x: &Tensor<B, 4>, r: &Tensor<B, 4>, relu_conv: bool) -> [Vec<f32>; 3] {
    let y = match relu_conv {
        true => conv2d_relu(conv, x.clone()),
        false => relu(conv.forward(x.clone())),
    };
    let grads = (y.clone() * r.clone()).sum().backward();
    let bias = conv.bias.as_ref().expect("a bias").val();
    [
        y.inner().into_data(),
        conv.weight.val().grad(&grads).expect("dw").into_data(),
        bias.grad(&grads).expect("db").into_data(),
    ]
    .map(|data| data.to_vec::<f32>().expect("f32"))
}

fn relative(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0f32, |m, (x, y)| m.max((x - y).abs() / scale))
}

#[test]
fn a_narrow_convolution_on_the_direct_path_chosen_by_a_file_matches_burn() {
    let (n, c, k, h, w) = (3, 3, 8, 11, 13);
    // The machine's file: the direct path for the forward and the weight gradient (times for
    // every path after the choice, as a whole line has them).
    let line =
        |site: &str| format!("{site}\t{c}\t{h}\t{w}\t1\t1\t{k}\t{n}\tdirect\t-\t1.000\t-\t-\n");
    let text = line("forward") + &line("weight-grad");
    let file = std::env::temp_dir().join(format!("batchlab-narrow-{}.tsv", std::process::id()));
    std::fs::write(&file, &text).expect("the choices file");
    choice::measure_here(&file);

    let device = Default::default();
    let conv = Conv2dConfig::new([c, k], [3, 3])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .init::<B>(&device);
    let x = Tensor::<B, 4>::random([n, c, h, w], Distribution::Normal(0.0, 1.0), &device);
    let r = Tensor::<B, 4>::random([n, k, h, w], Distribution::Normal(0.0, 1.0), &device);
    let fast = run(&conv, &x, &r, true);
    let burn = run(&conv, &x, &r, false);
    for (name, (a, b)) in ["output", "dw", "db"].iter().zip(fast.iter().zip(&burn)) {
        let d = relative(a, b);
        assert!(d <= 1e-4, "{name}: {d}");
    }
    // Both sites read their choice: nothing was measured and appended.
    let after = std::fs::read_to_string(&file).expect("the choices file");
    let _ = std::fs::remove_file(&file);
    assert_eq!(after, text);
}
