#!/usr/bin/perl
# perl-ge-memory: a GE memory-options engine written from GE's documentation
# of twelve memory options, speaking the ge-conformance subprocess protocol
# (version 2). Core Perl modules only.
use strict;
use warnings;
use JSON::PP ();
use Digest::SHA qw(sha256_hex sha512256_hex);
use Fcntl qw(O_WRONLY O_CREAT O_EXCL O_NOFOLLOW);
use builtin qw(created_as_number);
no warnings 'experimental::builtin';

my $ENGINE_NAME    = 'perl-ge-memory';
my $ENGINE_VERSION = '0.9.0';
my $JSON = JSON::PP->new->utf8->canonical;

my $U64MAX = 18446744073709551615;    # kept as a UV
my $ALIGN  = 32;                        # arena alignment (bytes)
my $COMBINED_ALIGN = 64;                # alignment of weights inside a combined file
my $SCRIPT_EVENT_CAP = 10000;           # our own bound on a session script
my $SCRIPT_EXEC_CAP  = 10000;           # and on the executions it asks for in all
my $WEIGHT_TOTAL_CAP = 64 * 1024 * 1024;
my $CONSTANT_CAP     = 10000;

# ---------------------------------------------------------------------------
# A small, fast JSON reader and writer (JSON::PP is pure Perl and far too slow
# for the multi-megabyte scripts the harness may send).
# ---------------------------------------------------------------------------
my %UNESC = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n", r => "\r", t => "\t");
sub json_unescape {
    my ($s) = @_;
    $s =~ s{\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(["\\/bfnrt]))}{
        defined $1 ? chr(0x10000 + ((hex($1) - 0xD800) << 10) + (hex($2) - 0xDC00))
      : defined $3 ? chr(hex $3)
      : $UNESC{$4}
    }ge;
    return $s;
}
sub json_decode {
    my ($text) = @_;
    utf8::decode($text);
    my @stack;
    my ($cur, $key, $root, $have_root, $v);
    my $ishash = 0;
    pos($text) = 0;
    while ($text =~ /\G[ \t\r\n]*+(?:"((?:[^"\\]++|\\.)*+)"([ \t\r\n]*+:)?|([\{\[])|([\}\]])|(,)|(-?(?:0|[1-9][0-9]*+))(?![.eE0-9])|(-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?)|(true|false|null))/gcs) {
        if (defined $1) {
            my $s = $1;
            $s = json_unescape($s) if index($s, '\\') >= 0;
            if (defined $2) { $key = $s; next }
            $v = $s;
        }
        elsif (defined $3) {
            $v = $3 eq '{' ? {} : [];
            if (!$cur) { $root = $v; $have_root = 1 }
            elsif ($ishash) { $cur->{$key} = $v }
            else { push @$cur, $v }
            push @stack, [ $cur, $key, $ishash ];
            ($cur, $key, $ishash) = ($v, undef, $3 eq '{');
            next;
        }
        elsif (defined $4) {
            die "json: unbalanced\n" unless @stack;
            ($cur, $key, $ishash) = @{ pop @stack };
            next;
        }
        elsif (defined $5) { next }
        elsif (defined $6) {
            my $n = $6;
            $v = (length($n) < 20 || ($n !~ /^-/ && length($n) == 20 && $n le '18446744073709551615')) ? 0 + $n : $n;
        }
        elsif (defined $7) { $v = 0 + $7 }
        else { $v = $8 eq 'true' ? JSON::PP::true : $8 eq 'false' ? JSON::PP::false : undef }
        if (!$cur) { $root = $v; $have_root = 1 }
        elsif ($ishash) { $cur->{$key} = $v }
        else { push @$cur, $v }
    }
    $text =~ /\G[ \t\r\n]*/gc;
    die "json: unexpected text at offset " . pos($text) . "\n" if pos($text) < length $text;
    die "json: unterminated\n" if @stack || !$have_root;
    return $root;
}
my %ESC = ('"' => '\\"', '\\' => '\\\\', "\n" => '\\n', "\r" => '\\r', "\t" => '\\t', "\b" => '\\b', "\f" => '\\f');
sub json_str {
    my ($s) = @_;
    $s =~ s/(["\\\x00-\x1f\x7f])/$ESC{$1} \/\/ sprintf('\\u%04x', ord $1)/ge if $s =~ /["\\\x00-\x1f\x7f]/;
    return qq("$s");
}
sub json_encode_value {
    my $v = $_[0];
    return 'null' unless defined $v;
    my $r = ref $v;
    if ($r eq 'HASH') {
        return '{' . join(',', map { (/["\\\x00-\x1f\x7f]/ ? json_str($_) : qq("$_")) . ':' . json_encode_value($v->{$_}) } sort keys %$v) . '}';
    }
    if ($r eq 'ARRAY') { return '[' . join(',', map { json_encode_value($_) } @$v) . ']' }
    if ($r eq 'JSON::PP::Boolean') { return $v ? 'true' : 'false' }
    return created_as_number($_[0]) ? "$v" : json_str($v);
}
sub json_encode { my $s = json_encode_value($_[0]); utf8::encode($s); return $s }

# ---------------------------------------------------------------------------
# The option table
# ---------------------------------------------------------------------------
my %OPT = (
    'ge.exec.atomicCleanPolicy'          => { tag => 'ACP', kind => 'enum', values => [qw(0 1)],     default => '0', levels => [qw(session)] },
    'ge.exec.disableReuseMemory'         => { tag => 'DRM', kind => 'enum', values => [qw(0 1)],     default => '0', levels => [qw(global session graph)] },
    'ge.exec.input_fusion_size'          => { tag => 'IFS', kind => 'range', max => 33554432,        default => '131072', levels => [qw(global session graph)] },
    'ge.exec.inputReuseMemIndexes'       => { tag => 'IRM', kind => 'indexes', count => 'inputs',    default => '', levels => [qw(graph)] },
    'ge.exec.reuseZeroCopyMemory'        => { tag => 'RZC', kind => 'enum', values => [qw(0 1)],     default => '0', levels => [qw(global session graph)] },
    'ge.exec.staticMemoryPolicy'         => { tag => 'SMP', kind => 'enum', values => [qw(0 2 3 4)], default => '0', levels => [qw(global session)] },
    'ge.exec.outputReuseInputMemIndexes' => { tag => 'ORI', kind => 'pairs',                         default => '', levels => [qw(graph)] },
    'ge.exec.outputReuseMemIndexes'      => { tag => 'ORM', kind => 'indexes', count => 'outputs',   default => '', levels => [qw(graph)] },
    'ge.externalWeight'                  => { tag => 'EXW', kind => 'enum', values => [qw(0 1 2)],   default => '0', levels => [qw(global session)] },
    'ge.externalWeightDir'               => { tag => 'EWD', kind => 'path',                          default => '', levels => [qw(global session)] },
    'ge.inputBatchCpy'                   => { tag => 'IBC', kind => 'enum', values => [qw(0 1)],     default => '0', levels => [qw(global session graph)] },
    'ge.featureBaseRefreshable'          => { tag => 'FBR', kind => 'enum', values => [qw(0 1)],     default => '0', levels => [qw(global session graph)] },
);
my @KEYS = sort keys %OPT;
my @LEVELS = qw(global session graph);
my %BATCH_PRODUCTS = map { $_ => 1 } qw(ascend-950pr ascend-950dt atlas-a3-training atlas-a3-inference atlas-a2-training atlas-a2-inference);
my %ALL_PRODUCTS = (%BATCH_PRODUCTS, map { $_ => 1 } qw(atlas-training atlas-inference atlas-200i-500-a2));

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------
sub diag {
    my (%a) = @_;
    my %d = (clause => $a{clause} // '', message => $a{message} // '');
    $d{key}   = $a{key}   if defined $a{key};
    $d{level} = $a{level} if defined $a{level};
    $d{value} = $a{value} if defined $a{value};
    $d{subject} = $a{subject} // {};
    return \%d;
}

sub plain_decimal { my ($s) = @_; return defined $s && $s =~ /\A(?:0|[1-9][0-9]*)\z/ }

# compare two plain decimal strings numerically (no size limit)
sub dec_cmp {
    my ($a, $b) = @_;
    return length($a) <=> length($b) || $a cmp $b;
}
sub fits_u64 { my ($s) = @_; return dec_cmp($s, '18446744073709551615') <= 0 }
sub round_up {
    my ($n, $a) = @_;
    my $r = $n % $a;
    return $n if $r == 0;
    return undef if $n > $U64MAX - ($a - $r);
    return $n + ($a - $r);
}
sub uniq_sorted { my %h = map { $_ => 1 } @_; return sort keys %h }

# ---------------------------------------------------------------------------
# Option resolution (shared by every capability)
#   $maps:  { global => {...}, session => {...}, graph => {...} }
#   $facts: { inputs, outputs (undef when unknown), shape, run_mode, product,
#             subject => extra subject fields (session: graph id),
#             only_levels => [levels to look at] }
# ---------------------------------------------------------------------------
sub validate_value {
    my ($key, $value, $facts) = @_;
    my $o = $OPT{$key};
    my @errs;    # [clause, subject, message]
    my $canon;
    my @warns;    # warnings from the value itself (indexes out of range)
    my $drop_all = 0;
    if ($o->{kind} eq 'enum') {
        if (grep { $_ eq $value } @{ $o->{values} }) { $canon = $value }
        else {
            push @errs, ["$o->{tag}-001", {}, "\"" . printable($value) . "\" is none of " . join('/', @{ $o->{values} })];
        }
    }
    elsif ($o->{kind} eq 'range') {
        if (!plain_decimal($value)) {
            push @errs, ['OPT-003', {}, "\"" . printable($value) . "\" is not a plain decimal byte count"];
        }
        elsif (dec_cmp($value, "$o->{max}") > 0) {
            push @errs, ["$o->{tag}-001", {}, "threshold $value is above the documented maximum $o->{max}"];
        }
        else { $canon = $value }
    }
    elsif ($o->{kind} eq 'path') {
        if ($value eq '') { push @errs, ['OPT-003', {}, 'an empty directory names nothing'] }
        elsif (index($value, "\0") >= 0) { push @errs, ['EWD-004', {}, 'a directory name cannot hold a NUL byte'] }
        else { $canon = $value }
    }
    elsif ($o->{kind} eq 'indexes') {
        if ($value eq '') {
            push @errs, ['OPT-003', { item => '' }, 'an empty list names no index'];
        }
        else {
            my @items = split /,/, $value, -1;
            my %seen;
            my @good;
            for my $it (@items) {
                if (!plain_decimal($it)) {
                    push @errs, ["$o->{tag}-004", { item => $it }, "item \"" . printable($it) . "\" is not a plain decimal index"];
                    next;
                }
                if ($seen{$it}++) {
                    push @errs, ["$o->{tag}-004", (fits_u64($it) ? { index => 0 + $it } : { item => $it }), "index $it is listed more than once"]
                        if $seen{$it} == 2;
                    next;
                }
                push @good, $it;
            }
            if (!@errs) {
                my $count = $facts->{ $o->{count} };
                my @kept;
                for my $it (@good) {
                    if (defined $count && dec_cmp($it, "$count") >= 0) {
                        push @warns, ["$o->{tag}-003", (fits_u64($it) ? { index => 0 + $it } : { item => $it }),
                            "index $it is not below the $o->{count} count $count: the index configuration does not take effect"];
                        $drop_all = 1;
                    }
                    else { push @kept, $it }
                }
                @kept = () if $drop_all;    # our reading: the whole configuration is void
                $canon = join ',', sort { dec_cmp($a, $b) } @kept;
            }
        }
    }
    elsif ($o->{kind} eq 'pairs') {
        if ($value eq '') {
            push @errs, ['OPT-003', { pair => '' }, 'an empty pair list names no pair'];
        }
        else {
            my @segs = split /\|/, $value, -1;
            my (@pairs, %in_seen, %out_seen);
            for my $s (@segs) {
                if ($s =~ /\A(0|[1-9][0-9]*),(0|[1-9][0-9]*)\z/) { push @pairs, [$1, $2, $s] }
                else { push @errs, ['ORI-006', { pair => $s }, "segment \"" . printable($s) . "\" is not input,output"] }
            }
            for my $p (@pairs) {
                $in_seen{ $p->[0] }++;
                $out_seen{ $p->[1] }++;
            }
            for my $i (sort { dec_cmp($a, $b) } keys %in_seen) {
                next unless $in_seen{$i} > 1;
                push @errs, ['ORI-005', (dec_cmp($i, '4294967295') <= 0 ? { input => 0 + $i } : { pair => $i }), "input $i is named by more than one pair"];
            }
            for my $j (sort { dec_cmp($a, $b) } keys %out_seen) {
                next unless $out_seen{$j} > 1;
                push @errs, ['ORI-004', (dec_cmp($j, '4294967295') <= 0 ? { output => 0 + $j } : { pair => $j }), "output $j is named by more than one pair"];
            }
            if (!@errs) {
                my @kept;
                for my $p (@pairs) {
                    my $bad = (defined $facts->{inputs} && dec_cmp($p->[0], "$facts->{inputs}") >= 0)
                        || (defined $facts->{outputs} && dec_cmp($p->[1], "$facts->{outputs}") >= 0);
                    if ($bad) {
                        push @warns, ['ORI-003', { pair => $p->[2] }, "pair $p->[2] names an index outside the model; it does not take effect"];
                    }
                    else { push @kept, $p }
                }
                $canon = join '|', map { "$_->[0],$_->[1]" } sort { dec_cmp($a->[0], $b->[0]) } @kept;
            }
        }
    }
    return { errs => \@errs, canon => $canon, warns => \@warns };
}

sub printable {
    my ($s) = @_;
    $s =~ s/([\x00-\x1f\x7f])/sprintf('\\x%02x', ord $1)/ge;
    return $s;
}

sub resolve_options {
    my ($maps, $facts) = @_;
    $maps ||= {};
    my $subj = $facts->{subject} || {};
    my @levels = $facts->{only_levels} ? @{ $facts->{only_levels} } : @LEVELS;
    my (%effective, @rejected, %pass, @errors, @warnings, @ineffective, %parsed);
    for my $key (@KEYS) {
        my $o = $OPT{$key};
        my %allowed = map { $_ => 1 } @{ $o->{levels} };
        my ($bad, $win, $winlvl, $winres) = (0);
        for my $lvl (@LEVELS) {
            next unless grep { $_ eq $lvl } @levels;
            my $m = $maps->{$lvl};
            next unless ref $m eq 'HASH' && exists $m->{$key};
            my $v = $m->{$key};
            $v = '' unless defined $v;
            if (!$allowed{$lvl}) {
                my $d = diag(clause => "$o->{tag}-002", key => $key, level => $lvl, value => $v, subject => {%$subj},
                    message => "$key has no effect at the $lvl level (it is read at " . join('/', @{ $o->{levels} }) . " level); the setting is ignored");
                push @warnings, $d;
                push @ineffective, $d;
                next;
            }
            my $r = validate_value($key, $v, $facts);
            if (@{ $r->{errs} }) {
                $bad = 1;
                for my $e (@{ $r->{errs} }) {
                    push @errors, diag(clause => $e->[0], key => $key, level => $lvl, value => $v, subject => { %$subj, %{ $e->[1] } },
                        message => "$key at the $lvl level refused: $e->[2]");
                }
                next;
            }
            ($win, $winlvl, $winres) = ($r->{canon}, $lvl, $r);
        }
        if ($bad) { push @rejected, $key; next }
        if (defined $winlvl) {
            for my $w (@{ $winres->{warns} }) {
                push @warnings, diag(clause => $w->[0], key => $key, level => $winlvl, value => $maps->{$winlvl}{$key},
                    subject => { %$subj, %{ $w->[1] } }, message => $w->[2]);
            }
            $effective{$key} = { value => $win, from => $winlvl };
        }
        else { $effective{$key} = { value => $o->{default}, from => 'default' } }
    }
    for my $lvl (@levels) {
        my $m = $maps->{$lvl};
        next unless ref $m eq 'HASH';
        for my $k (keys %$m) { $pass{$k} = 1 unless $OPT{$k} }
    }
    # IBC-006: the text advises against global/graph settings of ge.inputBatchCpy
    for my $lvl (qw(global graph)) {
        next unless grep { $_ eq $lvl } @levels;
        my $m = $maps->{$lvl};
        next unless ref $m eq 'HASH' && exists $m->{'ge.inputBatchCpy'};
        push @warnings, diag(clause => 'IBC-006', key => 'ge.inputBatchCpy', level => $lvl, value => $m->{'ge.inputBatchCpy'}, subject => {%$subj},
            message => "ge.inputBatchCpy is best set per session; a $lvl-level setting is not recommended");
    }
    # restrictions outside the option maps: warn, never reject
    my $eff = sub { my $k = shift; return $effective{$k} };
    my $rw = sub {
        my ($clause, $key, $msg) = @_;
        my $e = $effective{$key};
        push @warnings, diag(clause => $clause, key => $key, level => $e->{from}, value => $e->{value}, subject => {%$subj}, message => $msg);
    };
    if (my $e = $eff->('ge.exec.input_fusion_size')) {
        if ($e->{from} ne 'default' && $e->{value} ne '131072' && $e->{value} ne '0') {
            $rw->('IFS-003', 'ge.exec.input_fusion_size', 'input fusion only happens on the asynchronous run (RunGraphAsync); this run is synchronous')
                if defined $facts->{run_mode} && $facts->{run_mode} eq 'sync';
            $rw->('IFS-004', 'ge.exec.input_fusion_size', 'input fusion only applies to static-shape graphs; this graph has dynamic shapes')
                if defined $facts->{shape} && $facts->{shape} eq 'dynamic';
        }
    }
    if (my $e = $eff->('ge.inputBatchCpy')) {
        if ($e->{value} eq '1') {
            $rw->('IBC-004', 'ge.inputBatchCpy', "batch copy is not available on $facts->{product}")
                if defined $facts->{product} && !$BATCH_PRODUCTS{ $facts->{product} };
            $rw->('IBC-003', 'ge.inputBatchCpy', 'batch copy needs more than one user input')
                if defined $facts->{inputs} && $facts->{inputs} < 2;
            $rw->('IBC-005', 'ge.inputBatchCpy', 'batch copy only happens on the asynchronous run (RunGraphAsync)')
                if defined $facts->{run_mode} && $facts->{run_mode} eq 'sync';
        }
    }
    if (my $e = $eff->('ge.featureBaseRefreshable')) {
        $rw->('FBR-003', 'ge.featureBaseRefreshable', 'a refreshable feature base applies to static-shape graphs only')
            if $e->{value} eq '1' && defined $facts->{shape} && $facts->{shape} eq 'dynamic';
    }
    if ((my $d = $eff->('ge.externalWeightDir')) && (my $w = $eff->('ge.externalWeight'))) {
        $rw->('EWD-003', 'ge.externalWeightDir', 'ge.externalWeight is 0: nothing is flushed to this directory')
            if $d->{from} ne 'default' && $w->{value} eq '0';
    }
    return {
        effective   => \%effective,
        rejected    => [ sort @rejected ],
        passthrough => [ sort keys %pass ],
        errors      => \@errors,
        warnings    => \@warnings,
        ineffective => \@ineffective,
    };
}

sub scenario_product {
    my ($sc) = @_;
    my $p = $sc->{product} // 'ascend-950pr';
    die "scenario error: unknown product spelling \"$p\"\n" unless $ALL_PRODUCTS{$p};
    return $p;
}

# ---------------------------------------------------------------------------
# options capability
# ---------------------------------------------------------------------------
sub cap_options {
    my ($sc) = @_;
    my $g = $sc->{graph} || {};
    my $facts = {
        inputs   => $g->{inputs}  // 1,
        outputs  => $g->{outputs} // 1,
        shape    => $g->{shape}   // 'static',
        run_mode => $sc->{run_mode} // 'async',
        product  => scenario_product($sc),
    };
    my $r = resolve_options($sc->{options}, $facts);
    return {
        capability  => 'options',
        effective   => $r->{effective},
        rejected    => $r->{rejected},
        passthrough => $r->{passthrough},
        errors      => $r->{errors},
        warnings    => $r->{warnings},
    };
}

# ---------------------------------------------------------------------------
# transfer capability
# ---------------------------------------------------------------------------
sub cap_transfer {
    my ($sc) = @_;
    my @inputs = @{ $sc->{inputs} || [] };
    my $shape = $sc->{shape} // 'static';
    my $run   = $sc->{run_mode} // 'async';
    my $product = scenario_product($sc);
    my $r = resolve_options($sc->{options}, { inputs => scalar(@inputs), outputs => undef, shape => $shape, run_mode => $run, product => $product });
    my %obs = (capability => 'transfer', fused => [], direct => [], batched => [], on_device => [], fused_bytes => 0,
        errors => [ @{ $r->{errors} } ], warnings => $r->{warnings});
    my %count;
    $count{ $_->{index} }++ for @inputs;
    for my $i (sort { $a <=> $b } keys %count) {
        next unless $count{$i} > 1;
        push @{ $obs{errors} }, diag(clause => 'TRF-002', subject => { input => 0 + $i }, message => "$count{$i} inputs claim index $i");
    }
    return \%obs if @{ $obs{errors} };

    my $thr = $r->{effective}{'ge.exec.input_fusion_size'}{value} + 0;
    my $ibc = $r->{effective}{'ge.inputBatchCpy'}{value};
    my (@dev, @host);
    for my $in (@inputs) {
        if (($in->{placement} // 'host') eq 'device') { push @dev, $in } else { push @host, $in }
    }
    my (@fused, @left);
    if ($run eq 'async' && $shape eq 'static' && $thr > 0) {
        my @elig = grep { $_->{size} <= $thr } @host;
        if (@elig >= 2) {
            my %f = map { $_->{index} => 1 } @elig;
            @fused = @elig;
            @left = grep { !$f{ $_->{index} } } @host;
        }
        else { @left = @host }
    }
    else { @left = @host }
    my $batch_on = $ibc eq '1' && $run eq 'async' && $BATCH_PRODUCTS{$product} && @inputs > 1;
    my (@batched, @direct);
    if ($batch_on && @left >= 2) { @batched = @left } else { @direct = @left }
    my $sum = 0;
    $sum += $_->{size} for @fused;
    $obs{fused}       = [ sort { $a <=> $b } map { 0 + $_->{index} } @fused ];
    $obs{direct}      = [ sort { $a <=> $b } map { 0 + $_->{index} } @direct ];
    $obs{batched}     = [ sort { $a <=> $b } map { 0 + $_->{index} } @batched ];
    $obs{on_device}   = [ sort { $a <=> $b } map { 0 + $_->{index} } @dev ];
    $obs{fused_bytes} = $sum;
    return \%obs;
}

# ---------------------------------------------------------------------------
# memory capability
# ---------------------------------------------------------------------------
sub cap_memory {
    my ($sc) = @_;
    my $nin  = $sc->{inputs}  // 0;
    my $nout = $sc->{outputs} // 0;
    my @t = @{ $sc->{tensors} || [] };
    my $r = resolve_options($sc->{options}, { inputs => $nin, outputs => $nout, shape => 'static' });
    my %obs = (capability => 'memory', offsets => {}, peak_bytes => 0, cleanup => [], aliases => [],
        reused_inputs => [], reused_outputs => [], errors => [ @{ $r->{errors} } ], warnings => [ @{ $r->{warnings} } ]);

    # A setting at a level where its option does not take effect refuses the plan:
    # the plan would silently not be the one the caller asked for.
    if (@{ $r->{ineffective} }) {
        my %inef = map { $_ + 0 => 1 } @{ $r->{ineffective} };
        $obs{warnings} = [ grep { !$inef{ $_ + 0 } } @{ $obs{warnings} } ];
        for my $d (@{ $r->{ineffective} }) {
            push @{ $obs{errors} }, diag(clause => $d->{clause}, key => $d->{key}, level => $d->{level}, value => $d->{value}, subject => {},
                message => "plan refused: $d->{key} was set at the $d->{level} level, where it does not take effect");
        }
    }

    # scenario validity
    my (%names, %dupname, %inidx, %outidx);
    for my $x (@t) {
        push @{ $names{ $x->{name} } }, $x;
    }
    for my $n (sort keys %names) {
        push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { tensor => $n }, message => "tensor name \"" . printable($n) . "\" is used " . scalar(@{ $names{$n} }) . " times")
            if @{ $names{$n} } > 1;
    }
    for my $x (@t) {
        push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { tensor => $x->{name} }, message => "tensor \"" . printable($x->{name}) . "\" is first used at step $x->{first}, after its last step $x->{last}")
            if $x->{first} > $x->{last};
        my $kind = $x->{role}{kind};
        if ($kind eq 'input')  { push @{ $inidx{ $x->{role}{index} } },  $x }
        if ($kind eq 'output') { push @{ $outidx{ $x->{role}{index} } }, $x }
    }
    for my $pair ([ \%inidx, $nin, 'input' ], [ \%outidx, $nout, 'output' ]) {
        my ($h, $n, $what) = @$pair;
        for my $i (sort { $a <=> $b } keys %$h) {
            if ($i >= $n) {
                push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { $what => 0 + $i }, message => "$what index $i is not below the $what count $n");
            }
            elsif (@{ $h->{$i} } > 1) {
                push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { $what => 0 + $i }, message => scalar(@{ $h->{$i} }) . " tensors claim $what $i");
            }
        }
        my $missing = 0;
        for (my $i = 0; $i < $n; $i++) {
            next if $h->{$i};
            push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { $what => 0 + $i }, message => "$what $i has no tensor");
            if (++$missing >= 1000 && $i + 1 < $n) {
                push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => {}, message => "further ${what}s up to " . ($n - 1) . " have no tensor either (not listed one by one)");
                last;
            }
        }
    }
    my $total = 0;
    my $overflow = 0;
    for my $x (@t) {
        my $rs = round_up($x->{size}, $ALIGN);
        if (!defined $rs || $total > $U64MAX - $rs) { $overflow = 1; last }
        $total += $rs;
    }
    push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { part => 'sizes' }, message => 'the tensor sizes, each rounded up to 32 bytes, add up past 2^64 - 1')
        if $overflow;
    my $run = $sc->{run};
    if (ref $run eq 'HASH') {
        my $ri = $run->{inputs} || [];
        my $ro = $run->{outputs} || [];
        push @{ $obs{errors} }, diag(clause => 'MEM-001', subject => { part => 'run' },
            message => "the run passes " . scalar(@$ri) . " input and " . scalar(@$ro) . " output addresses for $nin inputs and $nout outputs")
            if @$ri != $nin || @$ro != $nout;
    }
    return \%obs if @{ $obs{errors} };

    my $eff = $r->{effective};
    my $reuse = $eff->{'ge.exec.disableReuseMemory'}{value} ne '1';
    my $acp = $eff->{'ge.exec.atomicCleanPolicy'}{value};
    my %irm = map { $_ => 1 } grep { length } split /,/, $eff->{'ge.exec.inputReuseMemIndexes'}{value};
    my %orm = map { $_ => 1 } grep { length } split /,/, $eff->{'ge.exec.outputReuseMemIndexes'}{value};
    my @pairs = map { [ split /,/ ] } grep { length } split /\|/, $eff->{'ge.exec.outputReuseInputMemIndexes'}{value};

    # misaligned listed inputs/outputs: planned (and reused) anyway, with a warning
    for my $i (sort { $a <=> $b } keys %irm) {
        my $x = $inidx{$i}[0];
        push @{ $obs{warnings} }, diag(clause => 'IRM-011', key => 'ge.exec.inputReuseMemIndexes', level => 'graph', subject => { input => 0 + $i },
            message => "input $i is listed for reuse but its size $x->{size} is not a multiple of 32 bytes")
            if $x->{size} % 32;
    }
    for my $j (sort { $a <=> $b } keys %orm) {
        my $x = $outidx{$j}[0];
        push @{ $obs{warnings} }, diag(clause => 'ORM-011', key => 'ge.exec.outputReuseMemIndexes', level => 'graph', subject => { output => 0 + $j },
            message => "output $j is listed for reuse but its size $x->{size} is not a multiple of 32 bytes")
            if $x->{size} % 32;
    }

    return \%obs unless @t;
    my $END = 0;
    for my $x (@t) { $END = $x->{last} if $x->{last} > $END }

    # build blocks: [start, end, size(footprint), name-for-order, members [[tensor, rel offset]]]
    my @blocks;
    my %in_pair_in;
    my %in_pair_out;
    my %partner;    # tensor name -> alias partner name
    for my $p (@pairs) {
        my ($i, $o) = @$p;
        my $ti = $inidx{$i}[0];
        my $to = $outidx{$o}[0];
        $in_pair_in{$i} = 1;
        $in_pair_out{$o} = 1;
        $partner{ $ti->{name} } = $to->{name};
        $partner{ $to->{name} } = $ti->{name};
        my $sz = $ti->{size} > $to->{size} ? $ti->{size} : $to->{size};
        push @blocks, { start => 0, end => $END, size => round_up($sz, $ALIGN), key => $ti->{name}, members => [ [ $ti, 0 ], [ $to, 0 ] ] };
        push @{ $obs{aliases} }, { input => 0 + $i, output => 0 + $o };
    }
    $obs{aliases} = [ sort { $a->{input} <=> $b->{input} || $a->{output} <=> $b->{output} } @{ $obs{aliases} } ];
    my %groups;
    for my $x (@t) {
        my $k = $x->{role}{kind};
        if ($k eq 'input') {
            my $i = $x->{role}{index};
            next if $in_pair_in{$i};
            my ($s, $e) = $irm{$i} ? (0, $x->{last}) : (0, $END);
            push @blocks, { start => $s, end => $e, size => round_up($x->{size}, $ALIGN), key => $x->{name}, members => [ [ $x, 0 ] ] };
        }
        elsif ($k eq 'output') {
            my $j = $x->{role}{index};
            next if $in_pair_out{$j};
            my ($s, $e) = $orm{$j} ? ($x->{first}, $END) : (0, $END);
            push @blocks, { start => $s, end => $e, size => round_up($x->{size}, $ALIGN), key => $x->{name}, members => [ [ $x, 0 ] ] };
        }
        elsif ($k eq 'memset') {
            my $gk = $acp eq '0' ? '' : $x->{role}{op};
            push @{ $groups{$gk} }, $x;
        }
        else {
            push @blocks, { start => $x->{first}, end => $x->{last}, size => round_up($x->{size}, $ALIGN), key => $x->{name}, members => [ [ $x, 0 ] ] };
        }
    }
    my @groupblocks;
    for my $gk (sort keys %groups) {
        my @m = sort { $a->{name} cmp $b->{name} } @{ $groups{$gk} };
        my ($s, $e) = (undef, undef);
        for my $x (@m) {
            $s = $x->{first} if !defined $s || $x->{first} < $s;
            $e = $x->{last}  if !defined $e || $x->{last} > $e;
        }
        # the collective region is cleaned once before the run and kept for the whole run
        ($s, $e) = (0, $END) if $acp eq '0';
        my $off = 0;
        my @mem;
        for my $x (@m) { push @mem, [ $x, $off ]; $off += round_up($x->{size}, $ALIGN) }
        my $gb = { start => $s, end => $e, size => $off, key => $m[0]{name}, members => \@mem, group => 1 };
        push @blocks, $gb;
        push @groupblocks, $gb;
    }
    if (!$reuse) { $_->{start} = 0, $_->{end} = $END for @blocks }

    # first fit in order of start step, larger blocks first
    my @order = sort { $a->{start} <=> $b->{start} || $b->{size} <=> $a->{size} || $a->{key} cmp $b->{key} } @blocks;
    my @active;
    for my $blk (@order) {
        @active = grep { $_->{end} >= $blk->{start} } @active;
        my $cand = 0;
        if ($blk->{size} > 0) {
            for my $o (sort { $a->{off} <=> $b->{off} } @active) {
                last if $cand + $blk->{size} <= $o->{off};
                my $oe = $o->{off} + $o->{size};
                $cand = $oe if $oe > $cand;
            }
        }
        $blk->{off} = $cand;
        push @active, $blk if $blk->{size} > 0;
    }
    my $peak = 0;
    for my $blk (@blocks) {
        for my $m (@{ $blk->{members} }) {
            my ($x, $rel) = @$m;
            my $o = $blk->{off} + $rel;
            $obs{offsets}{ $x->{name} } = $o;
            my $end = $o + $x->{size};
            $peak = $end if $end > $peak;
        }
    }
    $obs{peak_bytes} = $peak;
    for my $blk (@groupblocks) {
        my ($lo, $hi);
        for my $m (@{ $blk->{members} }) {
            my ($x) = @$m;
            my $o = $obs{offsets}{ $x->{name} };
            $lo = $o if !defined $lo || $o < $lo;
            $hi = $o + $x->{size} if !defined $hi || $o + $x->{size} > $hi;
        }
        push @{ $obs{cleanup} }, { offset => $lo, size => $hi - $lo, tensors => [ sort map { $_->[0]{name} } @{ $blk->{members} } ] };
    }
    # which inputs / outputs have bytes some other tensor also occupies
    my @sized = sort { $obs{offsets}{ $a->{name} } <=> $obs{offsets}{ $b->{name} } } grep { $_->{size} > 0 } @t;
    my $shares = sub {
        my ($x) = @_;
        my $xo = $obs{offsets}{ $x->{name} };
        my $xe = $xo + $x->{size};
        for my $y (@sized) {
            next if $y == $x;
            next if defined $partner{ $x->{name} } && $partner{ $x->{name} } eq $y->{name};
            my $yo = $obs{offsets}{ $y->{name} };
            last if $yo >= $xe;
            return 1 if $yo + $y->{size} > $xo;
        }
        return 0;
    };
    for my $x (grep { $_->{size} > 0 } @t) {
        my $k = $x->{role}{kind};
        if ($k eq 'input' && $shares->($x))  { push @{ $obs{reused_inputs} },  0 + $x->{role}{index} }
        if ($k eq 'output' && $shares->($x)) { push @{ $obs{reused_outputs} }, 0 + $x->{role}{index} }
    }
    $obs{reused_inputs}  = [ sort { $a <=> $b } @{ $obs{reused_inputs} } ];
    $obs{reused_outputs} = [ sort { $a <=> $b } @{ $obs{reused_outputs} } ];

    # the run: every pair in force must be passed at one address
    if (ref $run eq 'HASH') {
        for my $p (sort { $a->[0] <=> $b->[0] } @pairs) {
            my ($i, $o) = @$p;
            my $ai = $run->{inputs}[$i];
            my $ao = $run->{outputs}[$o];
            next if $ai == $ao;
            push @{ $obs{errors} }, diag(clause => 'ORI-011', key => 'ge.exec.outputReuseInputMemIndexes', level => $eff->{'ge.exec.outputReuseInputMemIndexes'}{from},
                subject => { input => 0 + $i, output => 0 + $o },
                message => "run failed: input $i is passed at $ai and output $o at $ao, but the pair says they share one address");
        }
    }
    return \%obs;
}

# ---------------------------------------------------------------------------
# session capability
# ---------------------------------------------------------------------------
sub cap_session {
    my ($sc) = @_;
    my @ev = @{ $sc->{events} || [] };
    my $maps = $sc->{options} || {};
    my %obs = (capability => 'session', trace => [], refreshes => [], errors => [], warnings => []);

    # our own bound on a script
    my $execs = 0;
    for my $e (@ev) { $execs += ($e->{times} // 1) if $e->{event} eq 'execute' }
    if (@ev > $SCRIPT_EVENT_CAP || $execs > $SCRIPT_EXEC_CAP) {
        push @{ $obs{errors} }, diag(clause => 'SES-020', subject => { part => 'script' },
            message => "script refused: " . scalar(@ev) . " events and $execs executions; this engine runs at most $SCRIPT_EVENT_CAP events and $SCRIPT_EXEC_CAP executions per script");
        return \%obs;
    }

    # options: once for the session, once per load
    my $sess = resolve_options({ global => $maps->{global}, session => $maps->{session} }, { only_levels => [qw(global session)] });
    push @{ $obs{errors} },   @{ $sess->{errors} };
    push @{ $obs{warnings} }, @{ $sess->{warnings} };
    my $policy = $sess->{effective}{'ge.exec.staticMemoryPolicy'}{value} // '0';
    my %loadopt;    # step -> resolved options of that load
    for my $step (0 .. $#ev) {
        my $e = $ev[$step];
        next unless $e->{event} eq 'load';
        my $gmap = defined $e->{options} ? $e->{options} : $maps->{graph};
        my $r = resolve_options({ global => $maps->{global}, session => $maps->{session}, graph => $gmap },
            { shape => $e->{shape} // 'static', subject => { graph => 0 + $e->{graph} }, only_levels => [qw(graph)] });
        # the graph map is resolved over the session's values
        my %eff = %{ $sess->{effective} };
        for my $k (keys %{ $r->{effective} }) { $eff{$k} = $r->{effective}{$k} if $r->{effective}{$k}{from} eq 'graph' }
        push @{ $obs{errors} }, @{ $r->{errors} };
        # warnings that depend on the graph: level warnings of its map, restriction warnings
        push @{ $obs{warnings} }, grep { $_->{level} && $_->{level} eq 'graph' } @{ $r->{warnings} };
        my $fbr = $eff{'ge.featureBaseRefreshable'};
        if ($fbr && $fbr->{value} eq '1' && ($e->{shape} // 'static') eq 'dynamic') {
            push @{ $obs{warnings} }, diag(clause => 'FBR-003', key => 'ge.featureBaseRefreshable', level => $fbr->{from}, value => '1',
                subject => { graph => 0 + $e->{graph} }, message => "graph $e->{graph} has dynamic shapes: its feature base follows the rule of 0");
        }
        $loadopt{$step} = \%eff;
    }
    return \%obs if @{ $obs{errors} };

    my $static_pool  = ($policy eq '2' || $policy eq '4');
    my $dynamic_pool = ($policy eq '3' || $policy eq '4');
    my %pool = ('static-pool' => { size => 0, users => {} }, 'dynamic-pool' => { size => 0, users => {} });
    my %g;    # loaded graphs
    my $trace = $obs{trace};
    my $T = sub { push @$trace, { step => 0 + $_[0], action => $_[1], pool => $_[2], bytes => 0 + $_[3] } };

    my $unload = sub {
        my ($step, $id) = @_;
        my $st = delete $g{$id};
        if ($st->{own_feature}) { $T->($step, 'free', "graph-$id/feature", $st->{feature}) }
        if ($st->{pool}) { delete $pool{ $st->{pool} }{users}{$id} }    # the pool itself is kept until the session closes
        if ($st->{io_held}) { $T->($step, 'free', "graph-$id/io", $st->{io}) }
    };

    for my $step (0 .. $#ev) {
        my $e  = $ev[$step];
        my $id = $e->{graph};
        my $kind = $e->{event};
        if ($kind eq 'load') {
            if ($g{$id}) {
                push @{ $obs{errors} }, diag(clause => 'SES-012', subject => { step => 0 + $step, graph => 0 + $id }, message => "event $step: graph $id is already loaded; load refused");
                next;
            }
            my $opt = $loadopt{$step};
            my $shape = $e->{shape} // 'static';
            my $st = { feature => $e->{feature_bytes} // 0, io => $e->{io_bytes} // 0, shape => $shape,
                rzc => $opt->{'ge.exec.reuseZeroCopyMemory'}{value}, fbr => $opt->{'ge.featureBaseRefreshable'}{value}, base_set => 0 };
            my $pname = ($shape eq 'static' && $static_pool) ? 'static-pool' : ($shape eq 'dynamic' && $dynamic_pool) ? 'dynamic-pool' : undef;
            if ($st->{feature} > 0) {
                if ($pname) {
                    my $p = $pool{$pname};
                    if ($p->{size} == 0) { $T->($step, 'alloc', $pname, $st->{feature}); $p->{size} = $st->{feature} }
                    elsif ($st->{feature} > $p->{size}) {
                        $T->($step, 'free', $pname, $p->{size});
                        $T->($step, 'alloc', $pname, $st->{feature});
                        $p->{size} = $st->{feature};
                    }
                    $p->{users}{$id} = 1;
                    $st->{pool} = $pname;
                }
                else { $T->($step, 'alloc', "graph-$id/feature", $st->{feature}); $st->{own_feature} = 1 }
            }
            $g{$id} = $st;
        }
        elsif ($kind eq 'execute') {
            if (!$g{$id}) {
                push @{ $obs{errors} }, diag(clause => 'SES-012', subject => { step => 0 + $step, graph => 0 + $id }, message => "event $step: graph $id is not loaded; execution refused");
                next;
            }
            my $st = $g{$id};
            my $times = $e->{times} // 1;
            next unless $st->{io} > 0 && $times > 0;
            if ($st->{rzc} eq '1') {
                # the one zero-copy area is planned when the graph first runs and kept until unload
                if (!$st->{io_held}) { $T->($step, 'alloc', "graph-$id/io", $st->{io}); $st->{io_held} = 1 }
            }
            else {
                for (1 .. $times) { $T->($step, 'alloc', "graph-$id/io", $st->{io}); $T->($step, 'free', "graph-$id/io", $st->{io}) }
            }
        }
        elsif ($kind eq 'refresh') {
            my $ok = 0;
            if (!$g{$id}) {
                push @{ $obs{errors} }, diag(clause => 'SES-012', subject => { step => 0 + $step, graph => 0 + $id }, message => "event $step: graph $id is not loaded; refresh refused");
            }
            else {
                my $st = $g{$id};
                my $refreshable = $st->{fbr} eq '1' && $st->{shape} eq 'static';
                if ($e->{bytes} < $st->{feature}) {
                    push @{ $obs{errors} }, diag(clause => 'FBR-013', key => 'ge.featureBaseRefreshable', subject => { step => 0 + $step, graph => 0 + $id },
                        message => "event $step: a base of $e->{bytes} bytes is smaller than the $st->{feature} feature bytes graph $id needs");
                }
                elsif ($refreshable) { $ok = 1 }
                else {
                    # with 0 the base GE set up at load is the base: it cannot be refreshed at all
                    push @{ $obs{errors} }, diag(clause => ($st->{shape} eq 'dynamic' ? 'FBR-014' : 'FBR-011'), key => 'ge.featureBaseRefreshable',
                        subject => { step => 0 + $step, graph => 0 + $id },
                        message => "event $step: the feature base of graph $id is not refreshable");
                }
            }
            push @{ $obs{refreshes} }, { step => 0 + $step, graph => 0 + $id, ok => ($ok ? JSON::PP::true : JSON::PP::false) };
        }
        elsif ($kind eq 'unload') {
            if (!$g{$id}) {
                push @{ $obs{errors} }, diag(clause => 'SES-012', subject => { step => 0 + $step, graph => 0 + $id }, message => "event $step: graph $id is not loaded; unload refused");
                next;
            }
            $unload->($step, $id);
        }
    }
    # the session closes: graphs still loaded go, the newest id first, then the pools
    my $end = scalar @ev;
    $unload->($end, $_) for sort { $b <=> $a } keys %g;
    for my $pn ('static-pool', 'dynamic-pool') {
        $T->($end, 'free', $pn, $pool{$pn}{size}) if $pool{$pn}{size} > 0;
    }
    return \%obs;
}

# ---------------------------------------------------------------------------
# weights capability
# ---------------------------------------------------------------------------

# Lexically resolve $p against the sandbox-relative directory $base.
# Returns the sandbox-relative result ('.' for the sandbox) or undef when the
# path is absolute, holds a NUL, or climbs out of the sandbox.
sub sandbox_rel {
    my ($base, $p) = @_;
    return undef if !defined $p || index($p, "\0") >= 0 || substr($p, 0, 1) eq '/';
    my @seg = grep { $_ ne '' && $_ ne '.' } split m{/}, ($base eq '.' ? '' : $base);
    for my $s (split m{/}, $p) {
        next if $s eq '' || $s eq '.';
        if ($s eq '..') { return undef unless @seg; pop @seg; next }
        push @seg, $s;
    }
    return @seg ? join('/', @seg) : '.';
}
sub rel_join { my ($d, $n) = @_; return $d eq '.' ? $n : "$d/$n" }
sub abs_of   { my ($sb, $rel) = @_; return $rel eq '.' ? $sb : "$sb/$rel" }

# mkdir -p below the sandbox. The last component must be a real directory
# when $final_real is set (a link there is refused). Returns undef or an error text.
sub make_dirs {
    my ($sb, $rel, $final_real) = @_;
    return undef if $rel eq '.';
    my @seg = split m{/}, $rel;
    my $cur = $sb;
    for my $i (0 .. $#seg) {
        $cur .= "/$seg[$i]";
        my $last = $i == $#seg;
        if (lstat $cur) {
            if (-l _) {
                return "$cur is a symbolic link where the weight directory must be" if $last && $final_real;
                next if -d $cur;
                return "$cur is a link that leads to no directory";
            }
            next if -d _;
            return "$cur exists and is not a directory";
        }
        mkdir $cur or return "cannot create $cur: $!";
    }
    return undef;
}

sub write_atomically {
    my ($dir_abs, $name, $bytes) = @_;
    my $tmp = "$dir_abs/.$name.partial-$$";
    my $fh;
    sysopen($fh, $tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644) or return "cannot create a temporary file beside $name: $!";
    binmode $fh;
    my $off = 0;
    my $len = length $bytes;
    while ($off < $len) {
        my $w = syswrite($fh, $bytes, $len - $off > 1 << 20 ? 1 << 20 : $len - $off, $off);
        if (!defined $w) { my $err = "$!"; close $fh; unlink $tmp; return "cannot write $name: $err" }
        $off += $w;
    }
    if (!close $fh) { my $err = "$!"; unlink $tmp; return "cannot write $name: $err" }
    if (!rename $tmp, "$dir_abs/$name") { my $err = "$!"; unlink $tmp; return "cannot give $name its final name: $err" }
    return undef;
}

# remove a tree without following links; returns the sandbox-relative paths removed
sub remove_tree_nofollow {
    my ($sb, $rel) = @_;
    my @removed;
    my $walk;
    $walk = sub {
        my ($r) = @_;
        my $a = abs_of($sb, $r);
        lstat $a or return;
        if (-d _ && !-l _) {
            chmod 0700, $a;
            if (opendir my $dh, $a) {
                my @ents = grep { $_ ne '.' && $_ ne '..' } readdir $dh;
                closedir $dh;
                $walk->(rel_join($r, $_)) for sort @ents;
            }
            rmdir $a and push @removed, $r;
        }
        else { unlink $a and push @removed, $r }
    };
    $walk->($rel);
    return sort @removed;
}

sub cap_weights {
    my ($sc, $sb) = @_;
    die "weights request without a sandbox\n" unless defined $sb && length $sb;
    $sb =~ s{/+\z}{} unless $sb eq '/';
    my %obs = (capability => 'weights', dir => '', files => [], nodes => [], removed => [], errors => [], warnings => []);
    my $r = resolve_options($sc->{options}, { only_levels => [qw(global session graph)] });
    push @{ $obs{warnings} }, @{ $r->{warnings} };

    # scenario paths
    my @perr;
    my $wd = sandbox_rel('.', $sc->{work_dir} // '');
    push @perr, diag(clause => 'WGT-001', subject => { part => 'work-dir' }, message => 'the working directory leaves the sandbox') unless defined $wd;
    my $awp = $sc->{ascend_work_path} || { state => 'unset' };
    my $awp_rel;
    if (($awp->{state} // 'unset') eq 'set') {
        my $p = $awp->{path} // '';
        $awp_rel = $p eq '' ? undef : sandbox_rel('.', $p);
        push @perr, diag(clause => 'WGT-001', subject => { part => 'ascend-work-path' }, message => 'ASCEND_WORK_PATH is empty, absolute or leaves the sandbox')
            unless defined $awp_rel;
    }
    my @setup = @{ $sc->{setup} || [] };
    for my $i (0 .. $#setup) {
        my $s = $setup[$i];
        my $ok = defined sandbox_rel('.', $s->{path} // '') && ($s->{path} // '') ne '';
        $ok &&= defined sandbox_rel('.', $s->{target} // '') if ($s->{step} // '') eq 'symlink';
        push @perr, diag(clause => 'WGT-001', subject => { setup => 0 + $i }, message => "setup step $i names a path outside the sandbox") unless $ok;
    }
    # the model
    my @cons = @{ $sc->{constants} || [] };
    my $mode = $r->{effective}{'ge.externalWeight'} ? $r->{effective}{'ge.externalWeight'}{value} : undef;
    my @cerr;
    my @bytes;
    if (@cons > $CONSTANT_CAP) {
        push @cerr, diag(clause => 'WGT-002', subject => { part => 'constants' }, message => scalar(@cons) . " constants; this engine loads at most $CONSTANT_CAP");
    }
    else {
        my %seen;
        my $total = 0;
        for my $c (@cons) {
            my $n = $c->{name} // '';
            my $bad;
            if ($n eq '') { $bad = 'a constant has no name' }
            elsif ($seen{$n}++) { $bad = "the name \"" . printable($n) . "\" is used twice" }
            elsif (($c->{type} // '') eq 'FileConstant') { $bad = "\"" . printable($n) . "\" is already a FileConstant" }
            elsif (defined $c->{hex} && defined $c->{fill}) { $bad = "\"" . printable($n) . "\" gives its bytes twice" }
            elsif (!defined $c->{hex} && !defined $c->{fill}) { $bad = "\"" . printable($n) . "\" gives no bytes" }
            elsif (defined $c->{hex} && ($c->{hex} =~ /[^0-9a-fA-F]/ || length($c->{hex}) % 2)) { $bad = "\"" . printable($n) . "\" has malformed hex" }
            if ($bad) { push @cerr, diag(clause => 'WGT-002', subject => { constant => $n }, message => $bad); push @bytes, undef; next }
            my $len = defined $c->{hex} ? length($c->{hex}) / 2 : $c->{fill}{len};
            if ($len > $WEIGHT_TOTAL_CAP - $total) {
                push @cerr, diag(clause => 'WGT-002', subject => { constant => $n }, message => "the weights pass this engine's cap of $WEIGHT_TOTAL_CAP bytes at \"" . printable($n) . "\"");
                last;
            }
            $total += $len;
            push @bytes, defined $c->{hex} ? pack('H*', $c->{hex}) : chr($c->{fill}{byte}) x $len;
        }
    }
    my $root = $sc->{root_graph} // '';
    if (defined $mode && $mode eq '2' && ($root eq '' || $root eq '.' || $root eq '..' || $root =~ m{[/\0]} || length($root) + 16 > 255)) {
        push @cerr, diag(clause => 'WGT-002', subject => { part => 'root-graph' }, message => 'the root graph name cannot be part of the combined file name');
    }
    if (@perr || @cerr || @{ $r->{errors} }) {
        push @{ $obs{errors} }, @perr, @cerr, @{ $r->{errors} };
        return \%obs;
    }

    if ($mode eq '0') {
        $obs{nodes} = [ map { { name => $_->{name}, type => $_->{type} } } sort { $a->{name} cmp $b->{name} } @cons ];
        return \%obs;
    }

    # the flush directory
    my ($dir, $is_tmp);
    my $ewd = $r->{effective}{'ge.externalWeightDir'}{value};
    my $tmpname = "tmp_weight_$sc->{pid}_$sc->{session_id}";
    if ($ewd ne '') {
        $dir = sandbox_rel($wd, $ewd);
        if (!defined $dir) {
            push @{ $obs{errors} }, diag(clause => 'WGT-001', key => 'ge.externalWeightDir', level => $r->{effective}{'ge.externalWeightDir'}{from},
                subject => { part => 'external-weight-dir' }, message => 'ge.externalWeightDir leaves the sandbox');
            return \%obs;
        }
    }
    elsif (defined $awp_rel) { $dir = rel_join($awp_rel, $tmpname); $is_tmp = 1 }
    else { $dir = rel_join($wd, $tmpname); $is_tmp = 1 }
    $obs{dir} = $dir;

    my $failed;
    if (my $err = make_dirs($sb, $dir, $is_tmp)) {
        push @{ $obs{errors} }, diag(clause => 'WGT-008', subject => { path => $dir }, message => "the weight directory cannot be made: $err");
        $failed = 1;
    }
    my $dabs = abs_of($sb, $dir);
    my (@files, @nodes);
    if (!$failed && $mode eq '1') {
        my %written;    # hash -> file rel
        for my $i (0 .. $#cons) {
            my $h = sha512256_hex($bytes[$i]);
            my $fname = "weight_$h";
            if (!$written{$h}) {
                if (my $err = write_atomically($dabs, $fname, $bytes[$i])) {
                    push @{ $obs{errors} }, diag(clause => 'WGT-008', subject => { path => rel_join($dir, $fname) }, message => $err);
                    $failed = 1;
                    last;
                }
                $written{$h} = rel_join($dir, $fname);
                push @files, { path => $written{$h}, len => length($bytes[$i]), sha256 => sha256_hex($bytes[$i]) };
            }
            push @nodes, { name => $cons[$i]{name}, type => 'FileConstant', file => $written{$h}, offset => 0, length => length($bytes[$i]) };
        }
    }
    elsif (!$failed && $mode eq '2') {
        my $fname = "${root}_weight_combined";
        my $frel = rel_join($dir, $fname);
        my $blob = '';
        my %at;    # content digest -> offset
        for my $i (0 .. $#cons) {
            my $k = sha256_hex($bytes[$i]) . ':' . length($bytes[$i]);
            if (!defined $at{$k}) {
                my $pad = (-length($blob)) % $COMBINED_ALIGN;
                $blob .= "\0" x $pad;
                $at{$k} = length $blob;
                $blob .= $bytes[$i];
            }
            push @nodes, { name => $cons[$i]{name}, type => 'FileConstant', file => $frel, offset => $at{$k}, length => length($bytes[$i]) };
        }
        if (@cons) {
            if (my $err = write_atomically($dabs, $fname, $blob)) {
                push @{ $obs{errors} }, diag(clause => 'WGT-008', subject => { path => $frel }, message => $err);
                $failed = 1;
            }
            else { push @files, { path => $frel, len => length($blob), sha256 => sha256_hex($blob) } }
        }
    }
    $obs{files} = [ sort { $a->{path} cmp $b->{path} } @files ];
    $obs{nodes} = $failed ? [] : [ sort { $a->{name} cmp $b->{name} } @nodes ];

    if ($sc->{unload} && $is_tmp) {
        lstat $dabs;
        if (-d _ && !-l _) { $obs{removed} = [ remove_tree_nofollow($sb, $dir) ] }
    }
    return \%obs;
}

# ---------------------------------------------------------------------------
# output hygiene: every number field is written as a JSON number
# ---------------------------------------------------------------------------
my %NUMERIC = map { $_ => 1 } qw(offset size peak_bytes fused_bytes step bytes graph index input output setup len length id);
sub numify {
    my ($x) = @_;
    if (ref $x eq 'HASH') {
        for my $k (keys %$x) {
            my $v = $x->{$k};
            if (ref $v) { numify($v) }
            elsif (defined $v && $NUMERIC{$k} && $v =~ /\A[0-9]+\z/) { $x->{$k} = 0 + $v }
        }
        if (ref $x->{offsets} eq 'HASH') { $_ = 0 + $_ for values %{ $x->{offsets} } }
    }
    elsif (ref $x eq 'ARRAY') {
        for my $v (@$x) { numify($v) if ref $v }
    }
    return $x;
}

# ---------------------------------------------------------------------------
# protocol loop
# ---------------------------------------------------------------------------
$| = 1;
binmode STDIN;
binmode STDOUT;
my %CAP = (options => \&cap_options, transfer => \&cap_transfer, memory => \&cap_memory, session => \&cap_session, weights => \&cap_weights);
my $greeted = 0;
sub send_msg { print STDOUT json_encode($_[0]), "\n" }

# A script far past our bound is refused before it is read in full.
sub too_large_script {
    my ($line) = @_;
    return undef unless length($line) > 200_000 && $line =~ /"capability"\s*:\s*"session"/;
    my $events = () = $line =~ /"event"\s*:/g;
    my $execs = 0;
    while ($line =~ /"event"\s*:\s*"execute"[^{}]*\}/g) {
        my $ev = $&;
        $execs += $ev =~ /"times"\s*:\s*([0-9]+)/ ? $1 : 1;
    }
    return undef unless $events > $SCRIPT_EVENT_CAP || $execs > $SCRIPT_EXEC_CAP;
    my ($id) = $line =~ /\A\s*\{.*?"id"\s*:\s*([0-9]+)/s or return undef;
    return { type => 'observation', id => 0 + $id, observation => { capability => 'session', trace => [], refreshes => [], warnings => [],
        errors => [ diag(clause => 'SES-020', subject => { part => 'script' },
            message => "script refused: $events events and $execs executions; this engine runs at most $SCRIPT_EVENT_CAP events and $SCRIPT_EXEC_CAP executions per script") ] } };
}

while (defined(my $line = <STDIN>)) {
    next if $line =~ /\A\s*\z/;
    if ($greeted && (my $quick = too_large_script($line))) { send_msg($quick); next }
    my $msg = eval { json_decode($line) };
    if (!$greeted) {
        if (!$msg || ($msg->{type} // '') ne 'hello') { send_msg({ type => 'error', message => 'expected a hello first' }); next }
        my $profile = $msg->{profile} // 'documented';
        if (($msg->{protocol} // 0) != 2) {
            send_msg({ type => 'error', message => "this engine speaks protocol version 2 only" });
            next;
        }
        if ($profile ne 'documented') {
            send_msg({ type => 'error', message => "this engine implements the documented profile only, not $profile" });
            next;
        }
        send_msg({ type => 'hello', protocol => 2, name => $ENGINE_NAME, version => $ENGINE_VERSION,
            capabilities => [qw(options transfer memory session weights)], profiles => ['documented'] });
        $greeted = 1;
        next;
    }
    if (!$msg || ($msg->{type} // '') ne 'request') {
        send_msg({ type => 'error', message => 'unreadable line: ' . substr(printable($line), 0, 200) });
        next;
    }
    my $id  = $msg->{id};
    my $cap = $msg->{capability} // ($msg->{scenario} || {})->{capability} // '';
    my $fn  = $CAP{$cap};
    if (!$fn) { send_msg({ type => 'not-supported', id => $id, reason => "unknown capability $cap" }); next }
    my $obs = eval { $fn->($msg->{scenario} || {}, $msg->{sandbox}) };
    if (!$obs) {
        my $err = $@ || 'unknown failure';
        chomp $err;
        print STDERR "request $id ($cap): $err\n";
        send_msg({ type => 'error', id => $id, message => "internal error: $err" });
        next;
    }
    send_msg({ type => 'observation', id => $id, observation => numify($obs) });
}
exit 0;
