# agent-pty's pty addon: node-pty 1.1.0's src/unix/pty.cc with agent-pty's patch applied (written to
# build/patched-src by scripts/build-native.mjs, which also passes node_addon_api_dir: the
# node-addon-api that node-pty itself depends on, wherever npm placed it), plus the termios reader.
# gyp writes only into build/.
{
  'targets': [
    {
      'target_name': 'agent_pty_pty',
      'sources': [
        'build/patched-src/pty.cc',
        'src/local-flags.cc',
        'src/peer-credentials.cc',
      ],
      # What node-addon-api's `node_addon_api_except` target gives its dependents (node-pty builds
      # with it), set here so that gyp writes nothing outside build/ for another project's .gyp file.
      'include_dirs': ['<(node_addon_api_dir)'],
      'defines': ['NAPI_CPP_EXCEPTIONS'],
      'cflags!': ['-fno-exceptions'],
      'cflags_cc!': ['-fno-exceptions'],
      # As node-pty builds it; hidden visibility keeps this addon's copies of node-pty's symbols apart
      # from node-pty's own pty.node, which is loaded into the same process.
      'cflags': ['-Wall', '-O2', '-D_FORTIFY_SOURCE=2', '-fvisibility=hidden'],
      'cflags_cc': ['-fvisibility=hidden'],
      'libraries': ['-lutil'],
      'conditions': [
        ['OS=="mac"', {
          'libraries!': ['-lutil'],
          'xcode_settings': {
            'OTHER_CFLAGS': ['-fvisibility=hidden'],
            'GCC_ENABLE_CPP_EXCEPTIONS': 'YES',
            'CLANG_CXX_LIBRARY': 'libc++',
            'MACOSX_DEPLOYMENT_TARGET': '10.7',
          },
        }],
      ],
    },
  ],
}
